// Checks shared by the summary tests: the summary against the turns' analysis.json files it was
// made from, worked out here independently, and every total against the sum of its parts.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { RunsSummary } from '../../../src/workflows/massgen/runs-summary-model.ts';

/** What the tests read of an analysis.json. */
export interface Analysis {
  source: { session: string; turn: number; massgenSession: { id: string; role: string } | null };
  state: { value: string };
  question: string | null;
  winner: { agentId: string | null };
  overview: { answers: number; votes: number; restarts: number; totalCostUsd: number | null; wallClockSeconds: number | null };
  agents: { id: string; model: string | null; costUsd: number | null }[];
  answers: { time: string | null }[];
  votes: { time: string | null; superseded: boolean }[];
  coordinationFlow: { time: string | null }[];
  errors: { enforcement: unknown[]; bufferCharsLost: number; apiErrors: unknown[] };
  config: { configPath: string | null };
}

export const micros = (usd: number | null | undefined): number => Math.round((usd ?? 0) * 1e6);
const sum = <T>(list: readonly T[], pick: (x: T) => number): number => list.reduce((s, x) => s + pick(x), 0);

/** Every analysis.json under a folder (any depth), parsed. */
export function analysesUnder(dir: string): Analysis[] {
  const out: Analysis[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = path.join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (name === 'analysis.json') out.push(JSON.parse(readFileSync(full, 'utf8')) as Analysis);
    }
  };
  walk(dir);
  return out;
}

/** The day the summary files a turn under: its first event's date, else the folder name's. */
export function dayOf(a: Analysis): string {
  const times = [...a.coordinationFlow, ...a.answers, ...a.votes]
    .map((e) => e.time)
    .filter((t): t is string => typeof t === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(t))
    .sort();
  if (times[0]) return times[0].slice(0, 10);
  const m = /^log_(\d{4})(\d{2})(\d{2})_/.exec(a.source.session) as RegExpExecArray;
  return `${m[1]}-${m[2]}-${m[3]}`;
}

/** Totals against the analyses they come from. */
export function expectTotalsOf(s: RunsSummary, analyses: Analysis[]): void {
  const t = s.totals;
  expect(t.turns).toBe(analyses.length);
  expect(t.sessions).toBe(new Set(analyses.map((a) => a.source.session)).size);
  expect(t.agentRuns).toBe(sum(analyses, (a) => a.agents.length));
  expect(t.answers).toBe(sum(analyses, (a) => a.overview.answers));
  expect(t.votes).toBe(sum(analyses, (a) => a.overview.votes));
  expect(t.reVotes).toBe(sum(analyses, (a) => a.votes.filter((v) => v.superseded).length));
  expect(t.restarts).toBe(sum(analyses, (a) => a.overview.restarts));
  expect(t.enforcementRetries).toBe(sum(analyses, (a) => a.errors.enforcement.length));
  expect(t.bufferCharsLost).toBe(sum(analyses, (a) => a.errors.bufferCharsLost));
  expect(t.apiErrors).toBe(sum(analyses, (a) => a.errors.apiErrors.length));
  expect(micros(t.costUsd)).toBe(sum(analyses, (a) => micros(a.overview.totalCostUsd)));
  expect(micros(t.agentCostUsd)).toBe(sum(analyses, (a) => sum(a.agents, (g) => micros(g.costUsd))));
  expect(t.turnsWithWinner).toBe(analyses.filter((a) => a.winner.agentId !== null).length);
  expect(Math.round(t.wallClockSeconds * 1000)).toBe(Math.round(sum(analyses, (a) => a.overview.wallClockSeconds ?? 0) * 1000));
  const days = new Map<string, number>();
  for (const a of analyses) days.set(dayOf(a), (days.get(dayOf(a)) ?? 0) + 1);
  expect(Object.fromEntries(s.perDay.map((d) => [d.date, d.turns]))).toEqual(Object.fromEntries(days));
}

/** Every total equals the sum of its parts. */
export function expectPartsAddUp(s: RunsSummary): void {
  const t = s.totals;
  expect(sum(s.states, (x) => x.turns)).toBe(t.turns);
  expect(sum(s.perDay, (d) => d.turns)).toBe(t.turns);
  expect(sum(s.perDay, (d) => d.agentRuns)).toBe(t.agentRuns);
  expect(sum(s.perDay, (d) => micros(d.costUsd))).toBe(micros(t.costUsd));
  expect(sum(s.duration.buckets, (b) => b.turns) + s.duration.unknown).toBe(t.turns);
  expect(t.turnsWithDuration).toBe(t.turns - s.duration.unknown);
  expect(sum(s.enforcement.byReason, (r) => r.retries)).toBe(t.enforcementRetries);
  expect(sum(s.enforcement.byModel, (r) => r.retries)).toBe(t.enforcementRetries);
  expect(sum(s.apiErrors.byBackend, (r) => r.errors)).toBe(t.apiErrors);
  expect(sum(s.bufferCharsLost.byModel, (r) => r.chars)).toBe(t.bufferCharsLost);
  expect(sum(s.winners.byAgent, (w) => w.wins)).toBe(t.turnsWithWinner);
  expect(sum(s.winners.byModel, (w) => w.wins)).toBe(t.turnsWithWinner);
  expect(sum(s.answersByAgent, (a) => a.answers)).toBe(t.answers);
  expect(s.perRun.reVotes.total).toBe(t.reVotes);
  expect(s.perRun.restarts.total).toBe(t.restarts);
  expect(t.unanimousTurns).toBeLessThanOrEqual(t.votedTurns);
  const g = s.groups.rows;
  expect(sum(g, (r) => r.agentRuns)).toBe(t.agentRuns);
  expect(sum(g, (r) => r.answers)).toBe(t.answers);
  expect(sum(g, (r) => r.votesCast)).toBe(t.votes);
  expect(sum(g, (r) => r.wins)).toBe(t.turnsWithWinner);
  expect(sum(g, (r) => r.restarts)).toBe(t.restarts);
  expect(sum(g, (r) => r.enforcementRetries)).toBe(t.enforcementRetries);
  expect(sum(g, (r) => r.apiErrors)).toBe(t.apiErrors);
  expect(sum(g, (r) => r.bufferCharsLost)).toBe(t.bufferCharsLost);
  expect(sum(g, (r) => micros(r.costUsd))).toBe(micros(t.agentCostUsd));
  expect(s.runs).toHaveLength(t.turns);
  expect(sum(s.runs, (r) => micros(r.costUsd))).toBe(micros(t.costUsd));
  expect(sum(s.runs, (r) => r.enforcementRetries)).toBe(t.enforcementRetries);
  const costs = s.costliest.map((r) => r.costUsd ?? 0);
  expect(costs).toEqual([...costs].sort((a, b) => b - a));
  expect(s.costliest.length).toBe(Math.min(10, t.turnsWithCost));
  const seconds = s.slowest.map((r) => r.wallClockSeconds ?? 0);
  expect(seconds).toEqual([...seconds].sort((a, b) => b - a));
  expect(s.slowest.length).toBe(Math.min(10, t.turnsWithDuration));
}

/** Every report a summary links to exists, relative to the summary's folder. */
export function expectReportLinks(s: RunsSummary, summaryDir: string): void {
  for (const r of [...s.costliest, ...s.slowest, ...s.runs])
    expect(statSync(path.join(summaryDir, r.report)).size, r.report).toBeGreaterThan(0);
}
