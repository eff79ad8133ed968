import { describe, expect, it } from 'vitest';
import { FreeSlots, SLOTS_LIVE_MS } from '../../../src/engine/dispatch/free-slots.ts';

describe('free slots', () => {
  it('free slots - the sum over the workers heard from, each by its latest word', () => {
    const s = new FreeSlots();
    expect(s.free(0)).toBe(0);
    s.update('w1', 2, 1, 0);
    s.update('w2', 1, 1, 0);
    expect(s.free(10)).toBe(3);
    s.update('w1', 0, 2, 20);
    expect(s.free(30)).toBe(1);
  });

  it('free slots - an older word that arrives late (a lower seq) does not undo a newer one', () => {
    const s = new FreeSlots();
    s.update('w1', 0, 5, 0);
    s.update('w1', 2, 4, 10);
    expect(s.free(20)).toBe(0);
  });

  it('free slots - a worker silent for SLOTS_LIVE_MS counts no more; any word keeps it counted', () => {
    const s = new FreeSlots();
    s.update('w1', 2, 1, 0);
    s.update('w2', 2, 1, 0);
    s.heard('w2', SLOTS_LIVE_MS);
    expect(s.free(SLOTS_LIVE_MS + 1)).toBe(2);
    expect(s.lastHeardAt()).toBe(SLOTS_LIVE_MS);
  });
});
