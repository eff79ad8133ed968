import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { diffTrees, readTree } from './read-tree.ts';

const root = mkdtempSync(join(tmpdir(), 'massgen-gen-det-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('generateLogs determinism', () => {
  it('generateLogs - same seed twice gives identical bytes in every file', () => {
    generateLogs({ outDir: join(root, 'a'), seed: 42 });
    generateLogs({ outDir: join(root, 'b'), seed: 42 });
    const a = readTree(join(root, 'a'));
    expect(a.size).toBeGreaterThan(100);
    expect(diffTrees(a, readTree(join(root, 'b')))).toEqual([]);
  });

  it('generateLogs - a different seed changes timestamps and log dir names', () => {
    const one = generateLogs({ outDir: join(root, 'c'), seed: 1 });
    const two = generateLogs({ outDir: join(root, 'd'), seed: 2 });
    expect(one.logDirs).not.toEqual(two.logDirs);
  });

  it('generateLogs - one scenario alone is byte-identical to the same scenario in a full run', () => {
    generateLogs({ outDir: join(root, 'full'), seed: 5 });
    const single = generateLogs({ outDir: join(root, 'single'), seed: 5, scenarios: ['enforcement'] });
    const name = single.logDirs[0] ?? '';
    const pick = (dir: string): ReturnType<typeof readTree> => readTree(join(root, dir, name));
    expect(diffTrees(pick('full'), pick('single'))).toEqual([]);
  });

  it('generateLogs - regenerating into the same folder replaces the log dirs without leftovers', () => {
    generateLogs({ outDir: join(root, 'e'), seed: 9 });
    const first = readTree(join(root, 'e'));
    generateLogs({ outDir: join(root, 'e'), seed: 9 });
    expect(diffTrees(first, readTree(join(root, 'e')))).toEqual([]);
  });
});
