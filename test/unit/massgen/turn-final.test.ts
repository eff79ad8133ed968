import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { resolveTurnUnit } from '../../../src/workflows/massgen/discover.ts';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'turn-final-'));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), text);
  }
  return root;
}

async function analyze(root: string) {
  const resolved = await resolveTurnUnit(path.join(root, 'log_20260101_000000_000001', 'turn_1'));
  if (!resolved.ok) throw new Error('no turn unit');
  // Long after the files were written: without an end-of-run sign the turn would be incomplete.
  return (await analyzeTurnUnit(resolved.unit, { nowMs: Date.now() + 3_600_000 })).analysis;
}

describe('turn-level final/', () => {
  const snapshot = 'log_20260101_000000_000001/turn_1/attempt_1/agent_b/20260101_000001_000001/answer.txt';

  it('analyzeTurnUnit - turn_N/final/<agent> names the winner and ends the turn when the attempt has no final/', async () => {
    const root = tree({ [snapshot]: 'an answer', 'log_20260101_000000_000001/turn_1/final/agent_b/answer.txt': 'the final answer' });
    try {
      const analysis = await analyze(root);
      expect(analysis.state.value).toBe('completed');
      expect(analysis.winner).toMatchObject({ agentId: 'agent_b', source: 'final/<agent> dir', finalPresented: true });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('analyzeTurnUnit - without any final/ the same silent turn is incomplete and has no winner', async () => {
    const root = tree({ [snapshot]: 'an answer' });
    try {
      const analysis = await analyze(root);
      expect(analysis.state.value).toBe('incomplete');
      expect(analysis.winner.agentId).toBe(null);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
