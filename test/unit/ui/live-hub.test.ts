import { describe, expect, it } from 'vitest';
import { LiveHub } from '../../../src/ui/live-hub.ts';

describe('dashboard live hub', () => {
  it('live-hub - messages get rising numbers; since(n) gives exactly those after n', () => {
    const hub = new LiveHub(5);
    for (let i = 0; i < 4; i += 1) hub.publish({ kind: 'changed', topic: 'jobs', detail: String(i) });
    expect(hub.seq).toBe(4);
    expect(hub.since(2)?.map((m) => m.seq)).toEqual([3, 4]);
    expect(hub.since(4)).toEqual([]);
    expect(hub.since(0)?.map((m) => m.seq)).toEqual([1, 2, 3, 4]);
  });

  it('live-hub - once the ring buffer has dropped what a client missed, since() says so', () => {
    const hub = new LiveHub(3);
    for (let i = 0; i < 6; i += 1) hub.publish({ kind: 'changed', topic: 'runs' });
    expect(hub.since(3)?.map((m) => m.seq)).toEqual([4, 5, 6]);
    expect(hub.since(2)).toBeUndefined();
  });

  it('live-hub - a listener that throws is dropped, the others still hear', () => {
    const hub = new LiveHub();
    const heard: number[] = [];
    hub.subscribe(() => {
      throw new Error('broken');
    });
    hub.subscribe((m) => heard.push(m.seq));
    hub.publish({ kind: 'changed', topic: 'jobs' });
    hub.publish({ kind: 'changed', topic: 'jobs' });
    expect(heard).toEqual([1, 2]);
  });

  it('live-hub - a producer waits for room while a client is behind, and goes on when the last catches up or leaves', async () => {
    const hub = new LiveHub();
    const a = {};
    const b = {};
    hub.pressure(a, true);
    hub.pressure(b, true);
    let resumed = false;
    const waiting = hub.room().then(() => {
      resumed = true;
    });
    hub.pressure(a, false);
    await Promise.resolve();
    expect(resumed).toBe(false);
    hub.pressure(b, false);
    await waiting;
    expect(resumed).toBe(true);
    await hub.room();
  });
});
