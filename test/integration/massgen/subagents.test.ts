import { cpSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { listTurnUnits } from '../../../src/workflows/massgen/discover.ts';
import type { TurnUnit } from '../../../src/workflows/massgen/model.ts';
import { FIXTURES } from './fixture-truth.ts';

describe('subagent runs', () => {
  it('analyzeTurnUnit - subagents/<id>/full_logs is summarized as a child run, not a separate session', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'subagents-'));
    cpSync(path.join(FIXTURES, 'massgen-v0191/enforcement'), root, { recursive: true });
    const log = readdirSync(root).find((d) => d.startsWith('log_')) ?? '';
    const attempt = path.join(root, log, 'turn_1/attempt_1');
    mkdirSync(path.join(attempt, 'subagents/research_1'), { recursive: true });
    cpSync(
      path.join(
        FIXTURES,
        'massgen-v0191/consensus-3',
        readdirSync(path.join(FIXTURES, 'massgen-v0191/consensus-3')).find((d) => d.startsWith('log_')) ?? '',
        'turn_1/attempt_1',
      ),
      path.join(attempt, 'subagents/research_1/full_logs'),
      { recursive: true },
    );
    const units = await listTurnUnits(root);
    expect(units).toHaveLength(1);
    const { analysis } = await analyzeTurnUnit(units[0] as TurnUnit);
    expect(analysis.subagents).toEqual([
      {
        id: 'research_1',
        dir: 'attempt_1/subagents/research_1/full_logs',
        finishReason: 'completed',
        winner: 'agent_b',
        cost: 0,
        answers: 3,
        votes: 3,
      },
    ]);
    expect(analysis.winner.agentId).toBe('agent_a');
    expect(analysis.overview.votes).toBe(4);
  });
});
