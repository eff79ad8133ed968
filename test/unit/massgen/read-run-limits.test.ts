import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogWarning } from '../../../src/workflows/massgen/model.ts';
import { readRun } from '../../../src/workflows/massgen/read-run.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function read(files: Record<string, string>, maxJsonBytes?: number) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-run-limits-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  const warnings: LogWarning[] = [];
  const run = await readRun({ dir, attempt: 1, subagents: [] }, (file, code, message) => warnings.push({ file, code, message }), {
    baseDir: dir,
    skipStreams: true,
    ...(maxJsonBytes === undefined ? {} : { maxJsonBytes }),
  });
  return { run, warnings };
}

describe('readRun size limits', () => {
  it('readRun - an execution_metadata.yaml over 2 MiB is skipped with a too-large warning, not parsed cut off', async () => {
    const lines = Array.from({ length: 120_000 }, (_, i) => `  key_${i}: value number ${i}`);
    const { run, warnings } = await read({ 'execution_metadata.yaml': `config:\n${lines.join('\n')}\n` });
    expect(run.metadata).toBeNull();
    expect(warnings.filter((w) => w.file === 'execution_metadata.yaml').map((w) => w.code)).toEqual(['too-large']);
  });

  it('readRun - a JSON file over maxJsonBytes is skipped with one warning naming its size and the limit; one under it is read', async () => {
    const status = JSON.stringify({ finish_reason: 'completed', is_complete: true, results: { winner: 'a' }, padding: 'x'.repeat(5000) });
    const over = await read({ 'status.json': status }, 4096);
    expect(over.run.status).toBeNull();
    expect(over.warnings.filter((w) => w.file === 'status.json')).toEqual([
      {
        file: 'status.json',
        code: 'too-large',
        message: expect.stringContaining(`file is ${status.length} bytes, over the 4096-byte limit`) as string,
      },
    ]);
    const under = await read({ 'status.json': status }, 8192);
    expect(under.run.status?.finishReason).toBe('completed');
    expect(under.warnings.filter((w) => w.code === 'too-large')).toEqual([]);
  });

  it('readRun - the coordination table TOTALS row is found line by line, after megabytes of rows', async () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => `| round ${i}   | ${'agent answered; '.repeat(3)} |`).join('\n');
    const { run } = await read({
      'coordination_table.txt': `${rows}\n| TOTALS   |   7 answers, 8 votes, 17 restarts → A selected   |\n${rows}\n`,
    });
    expect(run.table).toEqual({ answers: 7, votes: 8, restarts: 17 });
  });
});
