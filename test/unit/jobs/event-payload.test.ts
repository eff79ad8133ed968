import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { canonicalize, canonicalProblem } from '../../../src/security/jcs.ts';
import {
  buildPayload,
  decodePayload,
  formatEventLine,
  MAX_DETAIL_CHARS,
  MAX_PAYLOAD_BYTES,
} from '../../../src/workflows/jobs/event-payload.ts';

const base = { seq: 1, jobId: 'abc12345', event: 'completed' as const, timestamp: '2026-06-19T09:32:00Z', detail: 'done' };

describe('event payloads', () => {
  it('buildPayload - has exactly the seed fields, only a signature inside data (never the token), and passes job-event.schema.json', () => {
    const payload = buildPayload({ ...base, data: { files: 2 }, token: 'tok' });
    expect(Object.keys(payload)).toEqual(['schema_version', 'seq', 'job_id', 'event', 'timestamp', 'detail', 'data']);
    expect(Object.keys(payload.data ?? {})).toEqual(['files', 'hmac_sig']);
    expect(payload.data?.hmac_sig).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(payload)).not.toContain('tok"');
    expect(new SchemaRegistry().validate('job-event', payload)).toEqual({ ok: true });
  });

  it('canonicalize - writes RFC 8785 text: keys by UTF-16 code units, numbers as JavaScript writes them', () => {
    // The sorting and number examples of RFC 8785 (3.2.3 and 3.2.2.3).
    const keys = JSON.parse('{"\\u20ac":1,"\\r":2,"\\ufb33":3,"1":4,"\\ud83d\\ude00":5,"\\u0080":6,"\\u00f6":7}') as Record<string, number>;
    expect(canonicalize(keys)).toBe('{"\\r":2,"1":4,"\u0080":6,"ö":7,"€":1,"😀":5,"\ufb33":3}');
    const numbers = JSON.parse('[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001, 50.0, -0]') as number[];
    expect(canonicalize({ n: numbers, u: undefined, s: 'fertig: "ok"\n✓' })).toBe(
      '{"n":[333333333.3333333,1e+30,4.5,0.002,1e-27,50,0],"s":"fertig: \\"ok\\"\\n✓"}',
    );
  });

  it('canonicalProblem - names a number beyond 2^53 and a lone surrogate by their place; safe values pass', () => {
    expect(canonicalProblem(JSON.parse('{"data":{"rows":[1,12345678901234567890]}}'), '')).toMatch(
      /^data\.rows\[1\]: the number 12345678901234567000 is beyond ±2\^53 .* send it as a string$/,
    );
    expect(canonicalProblem({ detail: 'a\ud800b' }, '')).toMatch(/^detail: the text has a lone UTF-16 surrogate/);
    expect(canonicalProblem({ data: { pct: 50, n: Number.MAX_SAFE_INTEGER, '😀': 'x' } }, '')).toBeUndefined();
  });

  it('decodePayload - accepts the seed payload as Python json.dumps writes it (spaces, empty data)', () => {
    const raw =
      '{"schema_version": 1, "seq": 7, "job_id": "abc12345", "event": "progress", "timestamp": "2026-06-19T09:32:00Z", "detail": "x", "data": {}}';
    const decoded = decodePayload(raw, 'abc12345', null);
    expect(decoded).toMatchObject({ ok: true, payload: { seq: 7, event: 'progress' } });
  });

  it('decodePayload - names the reason for each kind of bad payload', () => {
    const good = JSON.parse(JSON.stringify(buildPayload({ ...base, token: 'tok' }))) as Record<string, unknown> & {
      data: Record<string, unknown>;
    };
    const cases: [unknown, string][] = [
      [good, 'ok'],
      ['not json', 'undecodable'],
      [[1], 'undecodable'],
      [{ ...good, schema_version: 2 }, 'schema_version'],
      [{ ...good, job_id: 'other' }, 'foreign_job'],
      [{ ...good, seq: 0 }, 'malformed'],
      [{ ...good, seq: 1.5 }, 'malformed'],
      [{ ...good, event: 'done' }, 'malformed'],
      [{ ...good, data: [] }, 'malformed'],
      [{ ...good, data: {} }, 'bad_token'],
      [{ ...good, data: { auth_token: 'tok' } }, 'bad_token'],
      [{ ...good, detail: 'changed after signing' }, 'bad_token'],
      [{ ...good, seq: 2 }, 'bad_token'],
      [{ ...good, data: { ...good.data, extra: 1 } }, 'bad_token'],
      [buildPayload({ ...base, token: 'another job token' }), 'bad_token'],
      [buildPayload({ ...base, detail: 'x'.repeat(MAX_DETAIL_CHARS + 1), token: 'tok' }), 'oversize'],
      [buildPayload({ ...base, data: { blob: 'x'.repeat(MAX_PAYLOAD_BYTES) }, token: 'tok' }), 'oversize'],
    ];
    for (const [value, reason] of cases) {
      const decoded = decodePayload(typeof value === 'string' ? value : JSON.stringify(value), 'abc12345', 'tok');
      expect(decoded.ok ? 'ok' : decoded.reason, JSON.stringify(value).slice(0, 200)).toBe(reason);
    }
  });

  it('decodePayload - an oversize payload is refused by its size alone, before it is parsed', () => {
    const decoded = decodePayload(Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x7b), 'abc12345', null);
    expect(decoded).toEqual({
      ok: false,
      reason: 'oversize',
      message: `payload is ${MAX_PAYLOAD_BYTES + 1} bytes; the limit is ${MAX_PAYLOAD_BYTES}`,
    });
  });

  it('decodePayload - a missing detail or timestamp decodes as empty text', () => {
    const decoded = decodePayload(JSON.stringify({ schema_version: 1, seq: 2, job_id: 'abc12345', event: 'started' }), 'abc12345', null);
    expect(decoded).toMatchObject({ ok: true, payload: { detail: '', timestamp: '' } });
  });

  it('formatEventLine - matches the seed subscriber line format', () => {
    expect(formatEventLine({ timestamp: '2026-06-19T09:32:00Z', job_id: 'abc12345', seq: 3, event: 'completed', detail: 'ok' })).toBe(
      '2026-06-19T09:32:00Z job=abc12345 seq=3 completed            ok',
    );
  });
});
