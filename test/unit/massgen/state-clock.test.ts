import { cpSync, mkdtempSync, readdirSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { buildClock, epochOfNaive, naiveMs } from '../../../src/workflows/massgen/clock.ts';
import { listTurnUnits } from '../../../src/workflows/massgen/discover.ts';
import type { RunData, TurnUnit } from '../../../src/workflows/massgen/model.ts';

const KILLED = path.resolve(import.meta.dirname, '../../fixtures/massgen-v0191/killed');

function copyKilled(): { root: string; attempt: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'killed-'));
  cpSync(KILLED, root, { recursive: true });
  const log = readdirSync(root).find((d) => d.startsWith('log_')) ?? '';
  return { root, attempt: path.join(root, log, 'turn_1', 'attempt_1') };
}

function touchAll(dir: string, seconds: number): void {
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) utimesSync(path.join(e.parentPath, e.name), seconds, seconds);
}

describe('run state rule', () => {
  it('decideState - without status.json the newest file mtime is the heartbeat (fresh = in_progress, old = incomplete)', async () => {
    const { root, attempt } = copyKilled();
    rmSync(path.join(attempt, 'status.json'));
    touchAll(attempt, 1_800_000_000);
    const unit = (await listTurnUnits(root))[0] as TurnUnit;
    const fresh = await analyzeTurnUnit(unit, { nowMs: 1_800_000_030_000, staleAfterSeconds: 60 });
    expect(fresh.analysis.state).toMatchObject({ value: 'in_progress', heartbeatSource: 'newest-file-mtime', ageSeconds: 30 });
    const old = await analyzeTurnUnit(unit, { nowMs: 1_800_000_600_000, staleAfterSeconds: 60 });
    expect(old.analysis.state).toMatchObject({ value: 'incomplete', ageSeconds: 600 });
  });

  it('decideState - a copied dead run with fresh mtimes is still incomplete: its status heartbeat is old', async () => {
    const { root, attempt } = copyKilled();
    const now = Date.now();
    touchAll(attempt, now / 1000);
    const unit = (await listTurnUnits(root))[0] as TurnUnit;
    const { analysis } = await analyzeTurnUnit(unit, { nowMs: now + 1000, staleAfterSeconds: 120 });
    expect(analysis.state.value).toBe('incomplete');
    expect(analysis.state.heartbeatSource).toBe('status.meta.last_updated');
  });

  it('decideState - end-of-run files mean completed even without status.json', async () => {
    const root = path.resolve(import.meta.dirname, '../../fixtures/massgen-real/.massgen/massgen_logs');
    for (const unit of await listTurnUnits(root))
      expect((await analyzeTurnUnit(unit, { nowMs: 0 })).analysis.state.value).toBe('completed');
  });
});

describe('clock', () => {
  it('naiveMs - reads ISO and snapshot-dir forms as UTC', () => {
    expect(naiveMs('2026-11-30T06:48:13.689721')).toBe(Date.UTC(2026, 10, 30, 6, 48, 13) + 689.721);
    expect(naiveMs('20261130_064813_500000')).toBe(Date.UTC(2026, 10, 30, 6, 48, 13) + 500);
    expect(naiveMs('final')).toBeNull();
  });

  it('buildClock - learns the local offset from a vote.json (local dir name + unix_timestamp)', () => {
    const run = {
      snapshots: [{ timestamp: '20261130_084813_000000', vote: { unixTimestamp: Date.UTC(2026, 10, 30, 6, 48, 13) / 1000 } }],
      status: { startTime: Date.UTC(2026, 10, 30, 6, 48, 0) / 1000 },
      metadata: null,
      coordination: null,
      events: null,
      metrics: null,
    } as unknown as RunData;
    const clock = buildClock([run]);
    expect(clock.tzOffsetMs).toBe(2 * 3600 * 1000);
    expect(epochOfNaive(clock, '2026-11-30T08:48:10')).toBe(Date.UTC(2026, 10, 30, 6, 48, 10) / 1000);
  });
});
