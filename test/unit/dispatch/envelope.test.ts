import { describe, expect, it } from 'vitest';
import { open, ReplayGuard, seal, workerKey } from '../../../src/engine/dispatch/envelope.ts';

const KEY = Buffer.from('k'.repeat(40));
const OTHER = Buffer.from('o'.repeat(40));
const BODY = { kind: 'taken', run: 'r1', job: 'a[1]', attempt: 1 };

describe('worker messages', () => {
  it('envelope - a sealed message opens with the same key and gives its body and sender', () => {
    const opened = open(KEY, seal(KEY, 'w1', BODY, 1000), new ReplayGuard(60_000), 1000);
    expect(opened).toEqual({ ok: true, from: 'w1', body: BODY, nonce: expect.any(String) });
  });

  it('envelope - signed with another key is refused', () => {
    const opened = open(KEY, seal(OTHER, 'w1', BODY, 1000), new ReplayGuard(60_000), 1000);
    expect(opened).toEqual({ ok: false, reason: expect.stringContaining('signature does not match') });
  });

  it('envelope - a tampered body or sender is refused', () => {
    const sealed = JSON.parse(seal(KEY, 'w1', BODY, 1000)) as Record<string, unknown>;
    const body = JSON.stringify({ ...sealed, body: { ...BODY, job: 'a[2]' } });
    const sender = JSON.stringify({ ...sealed, from: 'w2' });
    for (const text of [body, sender]) expect(open(KEY, text, new ReplayGuard(60_000), 1000)).toMatchObject({ ok: false });
  });

  it('envelope - an unsigned message is refused', () => {
    const sealed = JSON.parse(seal(KEY, 'w1', BODY, 1000)) as Record<string, unknown>;
    delete sealed.sig;
    expect(open(KEY, JSON.stringify(sealed), new ReplayGuard(60_000), 1000)).toEqual({ ok: false, reason: 'it is not signed' });
    expect(open(KEY, JSON.stringify(BODY), new ReplayGuard(60_000), 1000)).toEqual({ ok: false, reason: 'it is not signed' });
  });

  it('envelope - the same message twice is a replay the second time', () => {
    const guard = new ReplayGuard(60_000);
    const text = seal(KEY, 'w1', BODY, 1000);
    expect(open(KEY, text, guard, 1000).ok).toBe(true);
    expect(open(KEY, text, guard, 2000)).toEqual({ ok: false, reason: 'its nonce was seen before (a replay)' });
  });

  it('envelope - a message outside the time window is refused', () => {
    const text = seal(KEY, 'w1', BODY, 1000);
    expect(open(KEY, text, new ReplayGuard(60_000), 1000 + 61_000)).toMatchObject({ ok: false, reason: expect.stringContaining('window') });
  });

  it('worker key - refused when missing or short, and named by its variable', () => {
    expect(workerKey({})).toEqual({ error: expect.stringContaining('REFINERY_WORKER_KEY is not set') });
    expect(workerKey({ REFINERY_WORKER_KEY: 'short' })).toEqual({ error: expect.stringContaining('at least 32') });
    expect(workerKey({ REFINERY_WORKER_KEY: 'x'.repeat(32) })).toEqual({ key: Buffer.from('x'.repeat(32)) });
  });
});
