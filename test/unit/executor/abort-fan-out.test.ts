import { getEventListeners, getMaxListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { AbortFanOut } from '../../../src/engine/executor/abort-fan-out.ts';

const warnings: Error[] = [];
const onWarning = (w: Error): void => {
  warnings.push(w);
};

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('AbortFanOut', () => {
  it('AbortFanOut - twenty children keep one listener on the parent, none before the first', () => {
    const parent = new AbortController();
    const fan = new AbortFanOut(parent.signal);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    for (let i = 0; i < 20; i += 1) fan.child();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    fan.close();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it("AbortFanOut - the parent's abort reaches every child still at work, with its reason", () => {
    const parent = new AbortController();
    const fan = new AbortFanOut(parent.signal);
    const working = [fan.child(), fan.child(), fan.child()];
    const released = fan.child();
    released.release();
    const reason = new Error('interrupted');
    parent.abort(reason);
    for (const child of working) {
      expect(child.signal.aborted).toBe(true);
      expect(child.signal.reason).toBe(reason);
    }
    expect(released.signal.aborted).toBe(false);
  });

  it("AbortFanOut - a child's own abort (its timeout) leaves the parent and the other children alone", () => {
    const parent = new AbortController();
    const fan = new AbortFanOut(parent.signal);
    const [timedOut, other] = [fan.child(), fan.child()];
    timedOut.abort(new Error('timeout'));
    expect(timedOut.signal.reason).toEqual(new Error('timeout'));
    expect(other.signal.aborted).toBe(false);
    expect(parent.signal.aborted).toBe(false);
    parent.abort(new Error('interrupted'));
    expect(timedOut.signal.reason).toEqual(new Error('timeout'));
    expect(other.signal.reason).toEqual(new Error('interrupted'));
  });

  it('AbortFanOut - a child of an aborted parent is born aborted, and nothing is added to the parent', () => {
    const parent = new AbortController();
    parent.abort(new Error('gone'));
    const fan = new AbortFanOut(parent.signal);
    const child = fan.child();
    expect(child.signal.aborted).toBe(true);
    expect(child.signal.reason).toEqual(new Error('gone'));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it("AbortFanOut - a child's signal takes more listeners than Node's default limit without a warning", async () => {
    process.on('warning', onWarning);
    const fan = new AbortFanOut(new AbortController().signal);
    const child = fan.child();
    for (let i = 0; i < 25; i += 1) child.signal.addEventListener('abort', () => {});
    // Node emits process warnings on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((w) => w.name)).toEqual([]);
    // Meaningful because a plain signal here warns from its 11th listener (Node's default of 10).
    expect(getMaxListeners(new AbortController().signal)).toBe(10);
  });
});
