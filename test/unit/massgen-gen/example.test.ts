import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { diffTrees, readTree } from './read-tree.ts';

const EXAMPLE = join(import.meta.dirname, '../../../examples/massgen_logs');
/**
 * What `refinery run analyze` writes beside the logs (git-ignored) is not part of the example:
 * each turn's analysis and report, and the runs summary at the top (the README's first command
 * writes them before its second runs this test).
 */
const ANALYSIS_OUTPUT = /(^|\/)(analysis\.json|ANALYSIS_REPORT\.md)$|^(RUNS_SUMMARY\.md|runs-summary\.json)$/;

function committedTree(): ReturnType<typeof readTree> {
  return new Map([...readTree(EXAMPLE)].filter(([rel]) => !ANALYSIS_OUTPUT.test(rel)));
}
const root = mkdtempSync(join(tmpdir(), 'massgen-gen-example-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('examples/massgen_logs', () => {
  it('examples/massgen_logs - equals a fresh generation file by file (regenerate with scripts/gen-massgen-logs.ts --out examples/massgen_logs --seed 1)', () => {
    const seed = (JSON.parse(readFileSync(join(EXAMPLE, 'MANIFEST.json'), 'utf8')) as { seed: number }).seed;
    generateLogs({ outDir: root, seed });
    const fresh = readTree(root);
    const committed = committedTree();
    expect(committed.size).toBe(fresh.size);
    expect(diffTrees(committed, fresh)).toEqual([]);
  });

  it('examples/massgen_logs - stays small (under 1 MB of file content)', () => {
    let bytes = 0;
    for (const entry of committedTree().values()) if (entry.kind === 'file') bytes += entry.data.length;
    expect(bytes).toBeLessThan(1_000_000);
  });
});
