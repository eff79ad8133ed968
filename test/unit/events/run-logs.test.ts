// The run logs a run keeps: `.refinery/runs/<run id>/`, the newest 100 and its own, older ones removed as it starts.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { jsonlSink } from '../../../src/engine/events/jsonl-sink.ts';

let root = '';
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'refinery-run-logs-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const runs = (): string[] => readdirSync(path.join(root, '.refinery', 'runs')).sort();

/** A run log folder as a run leaves it, named to sort by `n`; `extra` adds a folder inside it. */
function oldRun(n: number, extra = false): string {
  const id = `20260101T0000${String(n).padStart(4, '0')}Z-old`;
  const dir = path.join(root, '.refinery', 'runs', id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'events.jsonl'), '{}\n');
  writeFileSync(path.join(dir, 'summary.json'), '{}\n');
  if (extra) {
    mkdirSync(path.join(dir, 'notes'));
    writeFileSync(path.join(dir, 'notes', 'a.txt'), 'kept by hand');
  }
  return id;
}

describe('run logs', () => {
  it('jsonlSink - a run keeps the newest 100 run logs beside its own; an old folder with a folder inside goes too', () => {
    const ids = Array.from({ length: 103 }, (_, n) => oldRun(n, n === 1));
    const sink = jsonlSink(root, '20270101T000000000Z-new');
    sink.sink({ type: 'run-start', stages: 0, params: {}, concurrency: 1 } as never);
    expect(sink.close()).toBeUndefined();
    const kept = runs();
    expect(kept).toHaveLength(101);
    expect(kept).toEqual([...ids.slice(3), '20270101T000000000Z-new']);
    for (const gone of ids.slice(0, 3)) expect(existsSync(path.join(root, '.refinery', 'runs', gone))).toBe(false);
  });
});
