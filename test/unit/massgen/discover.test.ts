import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listTurnUnits, resolveTurnUnit, turnUnitsOfSession } from '../../../src/workflows/massgen/discover.ts';

function tree(files: string[]): string {
  const root = mkdtempSync(path.join(tmpdir(), 'discover-'));
  for (const f of files) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), '{}');
  }
  return root;
}

describe('discover', () => {
  it('turnUnitsOfSession - sorts turns and attempts numerically, one unit per turn', async () => {
    const root = tree([
      'log_20260101_000000_000001/turn_10/attempt_1/status.json',
      'log_20260101_000000_000001/turn_2/attempt_10/status.json',
      'log_20260101_000000_000001/turn_2/attempt_9/status.json',
      'log_20260101_000000_000001/turn_1/attempt_1/status.json',
    ]);
    const units = await turnUnitsOfSession(path.join(root, 'log_20260101_000000_000001'));
    expect(units.map((u) => u.turn)).toEqual([1, 2, 10]);
    expect(units[1]?.attempts.map((a) => a.attempt)).toEqual([9, 10]);
    expect(units.every((u) => u.layout === 'turn-attempt')).toBe(true);
  });

  it('turnUnitsOfSession - legacy flat log is one unit with turnDir null', async () => {
    const root = tree(['log_20251025_225510/coordination_events.json', 'log_20251025_225510/agent_1/20251025_225516_091756/answer.txt']);
    const [unit, ...rest] = await turnUnitsOfSession(path.join(root, 'log_20251025_225510'));
    expect(rest).toEqual([]);
    expect(unit).toMatchObject({ turnDir: null, turn: 1, layout: 'flat' });
  });

  it('turnUnitsOfSession - finds a run by its snapshot children alone (agent dir of any name)', async () => {
    const root = tree(['log_20251025_225510/gpt5nano_1/20251025_225516_091756/answer.txt']);
    expect((await turnUnitsOfSession(path.join(root, 'log_20251025_225510')))[0]?.layout).toBe('flat');
  });

  it('turnUnitsOfSession - v0.1.9 turn dirs without attempts, and v0.1.3 attempts under the root', async () => {
    const a = tree(['log_x/turn_1/status.json']);
    expect((await turnUnitsOfSession(path.join(a, 'log_x')))[0]).toMatchObject({ layout: 'turn', turn: 1 });
    const b = tree(['log_y/attempt_1/status.json', 'log_y/attempt_2/status.json']);
    const [unit] = await turnUnitsOfSession(path.join(b, 'log_y'));
    expect(unit).toMatchObject({ layout: 'attempt', turnDir: null });
    expect(unit?.attempts.map((x) => x.attempt)).toEqual([1, 2]);
  });

  it('discover - subagents/*/full_logs are nested runs of the attempt, symlinks are never followed', async () => {
    const root = tree([
      'log_s/turn_1/attempt_1/status.json',
      'log_s/turn_1/attempt_1/subagents/sub1/full_logs/status.json',
      'elsewhere/log_z/turn_1/attempt_1/status.json',
    ]);
    symlinkSync(path.join(root, 'elsewhere/log_z'), path.join(root, 'log_link'));
    symlinkSync(path.join(root, 'elsewhere'), path.join(root, 'log_s/turn_1/attempt_1/subagents/sub1/live_logs'));
    const units = await listTurnUnits(root);
    expect(units.map((u) => path.basename(u.logDir))).toEqual(['log_s']);
    expect(units[0]?.attempts[0]?.subagents).toEqual([
      { id: 'sub1', dir: path.join(root, 'log_s/turn_1/attempt_1/subagents/sub1/full_logs') },
    ]);
  });

  it('resolveTurnUnit - accepts turn and attempt dirs, rejects a session with turns and empty dirs', async () => {
    const root = tree(['log_s/turn_1/attempt_1/status.json', 'log_s/turn_2/attempt_1/status.json', 'empty/.keep']);
    const byTurn = await resolveTurnUnit(path.join(root, 'log_s/turn_2'));
    expect(byTurn.ok && byTurn.unit.turn).toBe(2);
    const byAttempt = await resolveTurnUnit(path.join(root, 'log_s/turn_1/attempt_1'));
    expect(byAttempt.ok && byAttempt.unit.turn).toBe(1);
    const session = await resolveTurnUnit(path.join(root, 'log_s'));
    expect(session.ok).toBe(false);
    expect(!session.ok && session.reason).toContain('turn_1, turn_2');
    expect((await resolveTurnUnit(path.join(root, 'empty'))).ok).toBe(false);
    expect((await resolveTurnUnit(path.join(root, 'log_s/turn_9'))).ok).toBe(false);
  });
});
