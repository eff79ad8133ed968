// What a newcomer found in analyze (issue 35 §4): MCP errors that massgen.log records at INFO level,
// and vote wording that must say what the dashboard's votes tab says.
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { listTurnUnits } from '../../../src/workflows/massgen/discover.ts';
import { FIXTURES } from './fixture-truth.ts';

async function analyzeCopy(scenario: string, edit: (attemptDir: string) => void = () => {}) {
  const logs = mkdtempSync(path.join(tmpdir(), 'newcomer-'));
  cpSync(path.join(FIXTURES, 'massgen-v0191', scenario), logs, { recursive: true });
  const log = readdirSync(logs).find((n) => n.startsWith('log_')) as string;
  edit(path.join(logs, log, 'turn_1', 'attempt_1'));
  const [unit] = await listTurnUnits(logs);
  if (!unit) throw new Error('no turn');
  return analyzeTurnUnit(unit);
}

describe('analyze - what a newcomer found', () => {
  it('mcp errors - the real runs\' INFO-level "MCP unexpected error" lines are reported; other INFO MCP lines are not', async () => {
    const { analysis, report } = await analyzeCopy('consensus-3');
    expect(analysis.errors.logErrorLines).toBe(0);
    expect(analysis.errors.mcpErrors).toHaveLength(3);
    for (const e of analysis.errors.mcpErrors) {
      expect(e.level).toBe('INFO');
      expect(e.message).toMatch(
        /^MCP: error \(error\) - \{'message': "MCP unexpected error during function call mcp__subagent_\w+__list_subagents/,
      );
    }
    expect(analysis.errors.mcpErrors.map((e) => e.line)).toEqual([70, 103, 161]);
    expect(report).toContain('0 ERROR/CRITICAL line(s), 0 WARNING line(s), 3 MCP error line(s)');
    expect(report).toContain('### MCP Errors');
    expect(report).not.toContain('MCP tools allowed');
  });

  it('vote wording - recorded votes, those that counted, and the ignored ones as separate events', async () => {
    const { analysis, report } = await analyzeCopy('consensus-3');
    expect([analysis.overview.votes, analysis.overview.ignoredVotes]).toEqual([3, 3]);
    expect(report).not.toMatch(/\(3 ignored by restarts\)/);
    expect(report).toContain(
      '3 recorded vote(s), 3 of which counted; 3 more vote(s) ignored by restarts (separate vote_ignored events, not among the 3)',
    );
    expect(report).toContain('| Total Votes | 3 recorded: 3 counted; 3 more vote(s) ignored by restarts');
    const api = await analyzeCopy('api-error');
    const skipped = api.analysis.votes.filter((v) => v.superseded).length;
    expect(skipped).toBeGreaterThan(0);
    expect(api.report).toContain(`${skipped} skipped (superseded by the voter's later vote)`);
  });
});
