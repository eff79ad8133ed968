import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import type { TurnAnalysis } from '../../../src/workflows/massgen/analysis-model.ts';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { listTurnUnits } from '../../../src/workflows/massgen/discover.ts';
import { fixtureRuns, truthOf } from './fixture-truth.ts';

const registry = new SchemaRegistry(path.resolve(import.meta.dirname, '../../..'));

function resolvePointer(doc: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

async function analysisFor(logsDir: string, runDir: string): Promise<{ analysis: TurnAnalysis; report: string }> {
  const units = await listTurnUnits(logsDir);
  const unit = units.find((u) => u.attempts.some((a) => a.dir === runDir));
  if (!unit) throw new Error(`no turn unit holds ${runDir}; units: ${units.map((u) => u.attempts.map((a) => a.dir).join(',')).join(' ')}`);
  return analyzeTurnUnit(unit);
}

const runs = fixtureRuns();

describe('massgen conformance over test/fixtures', () => {
  it('fixtureRuns - finds the 2 legacy and 4 v0.1.91 runs', () => {
    expect(runs.map((r) => r.name).sort()).toEqual([
      'massgen-real/log_20251025_225510',
      'massgen-real/log_20251026_001748',
      'massgen-v0191/api-error',
      'massgen-v0191/consensus-3',
      'massgen-v0191/enforcement',
      'massgen-v0191/killed',
    ]);
  });

  for (const run of runs) {
    it(`analyzeTurnUnit - ${run.name} matches the files`, async () => {
      const truth = truthOf(run.runDir);
      const { analysis, report } = await analysisFor(run.logsDir, run.runDir);
      const check = registry.validate('turn-analysis', analysis);
      expect(check).toEqual({ ok: true });
      expect(analysis.winner.agentId).toBe(truth.winner);
      expect(analysis.overview.answers).toBe(truth.answers);
      expect(analysis.answers).toHaveLength(truth.answers);
      expect(analysis.overview.votes).toBe(truth.votes);
      if (truth.statusVoteSum !== null) expect(analysis.overview.votes).toBe(truth.statusVoteSum);
      expect(analysis.agents.map((a) => a.id)).toEqual(truth.agentIds);
      for (const agent of analysis.agents) expect(agent.enforcementRetries).toBe(truth.enforcement[agent.id] ?? 0);
      const byReason = Object.fromEntries(analysis.errors.enforcementByReason.map((r) => [r.reason, r.count]));
      expect(byReason).toEqual(truth.enforcementReasons);
      for (const rec of analysis.recommendations)
        for (const pointer of rec.evidence) expect(resolvePointer(analysis, pointer), `${rec.id} ${pointer}`).toBeDefined();
      expect(report.match(/```mermaid/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
      for (const heading of [
        '## Executive Summary',
        '## Session Overview',
        '## 1. Correctness Analysis',
        '## 2. Efficiency Analysis',
        '## 3. Command Pattern Analysis',
        '## 4. Work Duplication Analysis',
        '## 5. Agent Behavior Analysis',
        '## 6. Cost & Token Analysis',
        '## 7. Errors & Issues',
        '## 8. Recommendations',
        '## Appendix',
      ]) {
        expect(report).toContain(heading);
      }
    });
  }

  it('analyzeTurnUnit - killed run is incomplete when its heartbeat is old, in progress when fresh', async () => {
    const killed = runs.find((r) => r.name.endsWith('killed'));
    if (!killed) throw new Error('killed fixture missing');
    const units = await listTurnUnits(killed.logsDir);
    const unit = units[0];
    if (!unit) throw new Error('no unit');
    const heartbeat = (await analyzeTurnUnit(unit)).analysis;
    expect(heartbeat.state.heartbeatSource).toBe('status.meta.last_updated');
    const lastUpdated = Date.parse(heartbeat.state.lastActivity ?? '');
    const dead = await analyzeTurnUnit(unit, { nowMs: lastUpdated + 600_000, staleAfterSeconds: 120 });
    expect(dead.analysis.state.value).toBe('incomplete');
    expect(dead.report).toContain('**Incomplete:**');
    const live = await analyzeTurnUnit(unit, { nowMs: lastUpdated + 10_000, staleAfterSeconds: 120 });
    expect(live.analysis.state.value).toBe('in_progress');
    expect(live.report).toContain('**In progress:**');
    expect(live.analysis.recommendations.map((r) => r.id)).toContain('run-in-progress');
  });

  it('analyzeTurnUnit - wall clock of the legacy run ignores the idle second save', async () => {
    const legacy = runs.find((r) => r.name.endsWith('log_20251025_225510'));
    if (!legacy) throw new Error('fixture missing');
    const { analysis } = await analysisFor(legacy.logsDir, legacy.runDir);
    // session_end events say 814.2 s (first save) and 1337.6 s (second save); the first wins.
    expect(analysis.overview.wallClockSeconds).toBeGreaterThan(814);
    expect(analysis.overview.wallClockSeconds).toBeLessThan(815);
    expect(analysis.overview.restarts).toBe(17);
  });

  it('analyzeTurnUnit - api-error run reports both API errors from status reliability', async () => {
    const api = runs.find((r) => r.name.endsWith('api-error'));
    if (!api) throw new Error('fixture missing');
    const { analysis } = await analysisFor(api.logsDir, api.runDir);
    expect(analysis.errors.apiErrors.map((e) => e.agentId)).toEqual(['agent_b', 'agent_b']);
    expect(analysis.errors.apiErrors.some((e) => e.message.includes('peer closed connection'))).toBe(true);
    expect(analysis.recommendations.map((r) => r.id)).toContain('api-errors');
  });
});
