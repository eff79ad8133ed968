import { mkdtempSync, rmSync, watch, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChangeBatcher } from '../../../src/engine/watch/change-batcher.ts';
import type { FileChange } from '../../../src/engine/watch/types.ts';

/** Blocks this thread, as a watcher the OS does not schedule for a while (not a wait for an event). */
function stall(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe('ChangeBatcher', () => {
  it('ChangeBatcher - a burst with no quiet of debounceMs is handed over as one batch', async () => {
    const batches: FileChange[][] = [];
    const flushed = new Promise<void>((resolve) => {
      const batcher = new ChangeBatcher(50, 1000, (changes) => {
        batches.push(changes);
        resolve();
      });
      for (const p of ['a', 'b', 'a']) {
        batcher.activity();
        batcher.push({ kind: 'change', path: p });
      }
    });
    await flushed;
    expect(batches).toEqual([
      [
        { kind: 'change', path: 'a' },
        { kind: 'change', path: 'b' },
      ],
    ]);
  });

  it('ChangeBatcher - after the process stalls past the quiet time, notifications queued meanwhile join the batch instead of starting another', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'change-batcher-'));
    const batches: string[][] = [];
    let second: () => void = () => undefined;
    const secondBatch = new Promise<void>((resolve) => (second = resolve));
    const batcher = new ChangeBatcher(50, 5000, (changes) => {
      batches.push(changes.map((c) => c.path));
      if (changes.some((c) => c.path === 'late.txt')) second();
    });
    const watcher = watch(dir, (_event, name) => {
      batcher.activity();
      batcher.push({ kind: 'change', path: String(name) });
    });
    try {
      // From the check phase, so the next loop iteration runs the expired quiet timer before it
      // polls for the file-system notification written during the stall.
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          batcher.activity();
          batcher.push({ kind: 'change', path: 'early.txt' });
          writeFileSync(path.join(dir, 'late.txt'), 'x');
          stall(150);
          resolve();
        }),
      );
      await secondBatch;
      expect(batches).toEqual([['early.txt', 'late.txt']]);
    } finally {
      watcher.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
