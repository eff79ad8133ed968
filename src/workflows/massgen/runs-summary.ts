// Adds up the turns' digests into the summary of every run (RunsSummary). Pure: every figure is a
// sum or count over the digests, so every total equals the sum of its parts: costs are added in
// integer micro-dollars, and a per-agent figure that does not add up to its turn's total (restarts
// counted from the coordination table, buffer loss seen only in enforcement rows) puts the rest
// under "(unattributed)".
import type { GroupBy, GroupRow, RunRef, RunRow, RunsSummary, SessionStory, TurnDigest } from './runs-summary-model.ts';

export interface DigestEntry {
  digest: TurnDigest;
  /** ANALYSIS_REPORT.md relative to the summary's folder, '/'-separated. */
  report: string;
}

export interface SummaryOptions {
  logs: string;
  since?: string | null;
  groupBy?: GroupBy;
  generatedAt?: string;
}

export const UNKNOWN = '(unknown)';
export const UNATTRIBUTED = '(unattributed)';
const TOP = 10;
const BUCKETS: [string, number, number | null][] = [
  ['under 30 s', 0, 30],
  ['30 s to 1 min', 30, 60],
  ['1 to 2 min', 60, 120],
  ['2 to 5 min', 120, 300],
  ['5 to 10 min', 300, 600],
  ['10 to 30 min', 600, 1800],
  ['30 to 60 min', 1800, 3600],
  ['1 h or more', 3600, null],
];

const usd = (micros: number): number => micros / 1e6;
/** Code-unit order: stable across locales, and far cheaper than localeCompare over thousands of runs. */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const round3 = (x: number): number => Math.round(x * 1000) / 1000;

class Counter {
  readonly map = new Map<string, number>();
  add(key: string, n = 1): void {
    this.map.set(key, (this.map.get(key) ?? 0) + n);
  }
  /** Largest first, then by name; zero entries left out. */
  sorted(): [string, number][] {
    return [...this.map].filter(([, n]) => n !== 0).sort(([a, x], [b, y]) => y - x || byText(a, b));
  }
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? null;
}

function refOf(e: DigestEntry): RunRef {
  const d = e.digest;
  return {
    session: d.session,
    turn: d.turn,
    date: d.date,
    state: d.state,
    costUsd: d.costMicros === null ? null : usd(d.costMicros),
    wallClockSeconds: d.wallClockSeconds,
    question: d.question,
    report: e.report,
  };
}

function modelOf(d: TurnDigest, agentId: string | null): string {
  return d.agents.find((a) => a.id === agentId)?.model ?? UNKNOWN;
}

function backendOf(d: TurnDigest, agentId: string | null): string {
  return d.agents.find((a) => a.id === agentId)?.backend ?? UNKNOWN;
}

interface GroupAcc {
  turns: Set<string>;
  agentRuns: number;
  answers: number;
  votesCast: number;
  wins: number;
  restarts: number;
  enforcementRetries: number;
  bufferCharsLost: number;
  apiErrors: number;
  costMicros: number | null;
}

function groupKeyOf(d: TurnDigest, by: GroupBy, agentId: string | null): string {
  if (by === 'config') return d.config ?? UNKNOWN;
  if (agentId === null) return UNATTRIBUTED;
  if (by === 'agent') return d.agents.some((a) => a.id === agentId) ? agentId : UNKNOWN;
  return modelOf(d, agentId);
}

function groupRows(entries: DigestEntry[], by: GroupBy): GroupRow[] {
  const groups = new Map<string, GroupAcc>();
  const acc = (key: string): GroupAcc => {
    let g = groups.get(key);
    if (!g)
      groups.set(
        key,
        (g = {
          turns: new Set(),
          agentRuns: 0,
          answers: 0,
          votesCast: 0,
          wins: 0,
          restarts: 0,
          enforcementRetries: 0,
          bufferCharsLost: 0,
          apiErrors: 0,
          costMicros: null,
        }),
      );
    return g;
  };
  for (const { digest: d } of entries) {
    const turnKey = `${d.session}/${d.turn}`;
    const rest = { answers: d.answers, votesCast: d.votes, restarts: d.restarts, bufferCharsLost: d.bufferCharsLost };
    for (const a of d.agents) {
      const g = acc(groupKeyOf(d, by, a.id));
      g.turns.add(turnKey);
      g.agentRuns += 1;
      g.answers += a.answers;
      g.votesCast += a.votesCast;
      g.restarts += a.restarts;
      g.bufferCharsLost += a.bufferCharsLost;
      if (a.costMicros !== null) g.costMicros = (g.costMicros ?? 0) + a.costMicros;
      rest.answers -= a.answers;
      rest.votesCast -= a.votesCast;
      rest.restarts -= a.restarts;
      rest.bufferCharsLost -= a.bufferCharsLost;
    }
    if (Object.values(rest).some((n) => n !== 0)) {
      const g = acc(by === 'config' ? groupKeyOf(d, by, null) : UNATTRIBUTED);
      g.turns.add(turnKey);
      g.answers += rest.answers;
      g.votesCast += rest.votesCast;
      g.restarts += rest.restarts;
      g.bufferCharsLost += rest.bufferCharsLost;
    }
    if (d.winner !== null) acc(groupKeyOf(d, by, d.winner)).wins += 1;
    for (const [, agent, n] of d.enforcement) acc(groupKeyOf(d, by, agent)).enforcementRetries += n;
    for (const [agent, n] of d.apiErrors) acc(groupKeyOf(d, by, agent)).apiErrors += n;
  }
  return [...groups]
    .map(([key, g]) => ({
      key,
      turns: g.turns.size,
      agentRuns: g.agentRuns,
      answers: g.answers,
      votesCast: g.votesCast,
      wins: g.wins,
      restarts: g.restarts,
      enforcementRetries: g.enforcementRetries,
      bufferCharsLost: g.bufferCharsLost,
      apiErrors: g.apiErrors,
      costUsd: g.costMicros === null ? null : usd(g.costMicros),
    }))
    .sort((a, b) => b.agentRuns - a.agentRuns || b.turns - a.turns || byText(a.key, b.key));
}

/**
 * A folder that continues a MassGen session (`massgen --session-id`) is linked to the folder that
 * created it (the registry gives every continuation the first folder's log directory).
 */
export function sessionStories(entries: DigestEntry[]): { stories: SessionStory[]; continues: Map<string, string> } {
  const byId = new Map<string, DigestEntry[]>();
  for (const e of entries) {
    const id = e.digest.massgenSession?.id;
    if (id) byId.set(id, [...(byId.get(id) ?? []), e]);
  }
  const stories: SessionStory[] = [];
  const continues = new Map<string, string>();
  for (const [id, list] of [...byId].sort(([a], [b]) => byText(a, b))) {
    const folders = [...new Set(list.map((e) => e.digest.session))].sort();
    if (folders.length < 2) continue;
    const creators = list
      .filter((e) => e.digest.massgenSession?.role === 'created')
      .map((e) => e.digest.session)
      .sort();
    const startedIn = creators[0] ?? (folders[0] as string);
    const links: SessionStory['links'] = [];
    for (const folder of folders) {
      if (folder === startedIn) continue;
      const marker = list.find((e) => e.digest.session === folder && e.digest.massgenSession?.role === 'continued')?.digest.massgenSession;
      if (!marker) continue;
      links.push({ folder, continues: startedIn, evidence: `${folder}/${marker.evidence}` });
      continues.set(folder, startedIn);
    }
    // Every turn of the story's folders: a continuation's later turns name no session themselves.
    const turns = entries
      .filter((e) => folders.includes(e.digest.session))
      .sort((a, b) => a.digest.turn - b.digest.turn || byText(a.digest.session, b.digest.session))
      .map((e) => ({
        session: e.digest.session,
        turn: e.digest.turn,
        role: e.digest.massgenSession?.role ?? 'member',
        state: e.digest.state,
        report: e.report,
      }));
    stories.push({ id, startedIn, turns, links });
  }
  return { stories, continues };
}

function runRows(entries: DigestEntry[], continues: Map<string, string>): RunRow[] {
  return entries.map((e) => ({
    ...refOf(e),
    winner: e.digest.winner,
    answers: e.digest.answers,
    votes: e.digest.votes,
    enforcementRetries: e.digest.enforcement.reduce((s, [, , n]) => s + n, 0),
    massgenSession: e.digest.massgenSession?.id ?? null,
    continues: continues.get(e.digest.session) ?? null,
  }));
}

function byRunOrder(a: DigestEntry, b: DigestEntry): number {
  return byText(a.digest.session, b.digest.session) || a.digest.turn - b.digest.turn;
}

export function summarizeRuns(all: DigestEntry[], options: SummaryOptions): RunsSummary {
  const since = options.since ?? null;
  const groupBy = options.groupBy ?? 'model';
  const dated = all.filter((e) => since === null || (e.digest.date !== null && e.digest.date >= since)).sort(byRunOrder);
  // A continuation's orphan turn is the same run as its next turn: it shows in its session's story only.
  const entries = dated.filter((e) => e.digest.state !== 'continued');
  const digests = entries.map((e) => e.digest);
  const sum = (pick: (d: TurnDigest) => number): number => digests.reduce((s, d) => s + pick(d), 0);
  const costMicros = sum((d) => d.costMicros ?? 0);
  const agentCostMicros = sum((d) => d.agents.reduce((s, a) => s + (a.costMicros ?? 0), 0));
  const voted = digests.filter((d) => d.unanimous !== null);
  const unanimous = voted.filter((d) => d.unanimous === true).length;

  const states = new Counter();
  const reasons = new Counter();
  const enforcementByModel = new Counter();
  const apiByBackend = new Counter();
  const deniedByAgentTool = new Counter();
  const bufferByModel = new Counter();
  const winsByAgent = new Counter();
  const winsByModel = new Counter();
  const answersByAgent = new Map<string, { answers: number; turns: number }>();
  const days = new Map<string, { sessions: Set<string>; turns: number; agentRuns: number; costMicros: number }>();
  for (const d of digests) {
    states.add(d.state);
    const day = d.date ?? UNKNOWN;
    const dayAcc = days.get(day) ?? { sessions: new Set<string>(), turns: 0, agentRuns: 0, costMicros: 0 };
    dayAcc.sessions.add(d.session);
    dayAcc.turns += 1;
    dayAcc.agentRuns += d.agents.length;
    dayAcc.costMicros += d.costMicros ?? 0;
    days.set(day, dayAcc);
    for (const [reason, agent, n] of d.enforcement) {
      reasons.add(reason, n);
      enforcementByModel.add(`${modelOf(d, agent)}\u0000${backendOf(d, agent)}`, n);
    }
    for (const [agent, n] of d.apiErrors) apiByBackend.add(agent === null ? UNKNOWN : backendOf(d, agent), n);
    for (const [agent, tool, n] of d.deniedTools ?? []) deniedByAgentTool.add(`${agent ?? UNKNOWN}\u0000${tool}`, n);
    let attributed = 0;
    for (const a of d.agents) {
      bufferByModel.add(a.model ?? UNKNOWN, a.bufferCharsLost);
      attributed += a.bufferCharsLost;
      const acc = answersByAgent.get(a.id) ?? { answers: 0, turns: 0 };
      acc.answers += a.answers;
      acc.turns += 1;
      answersByAgent.set(a.id, acc);
    }
    bufferByModel.add(UNATTRIBUTED, d.bufferCharsLost - attributed);
    const unattributedAnswers = d.answers - d.agents.reduce((s, a) => s + a.answers, 0);
    if (unattributedAnswers !== 0) {
      const acc = answersByAgent.get(UNATTRIBUTED) ?? { answers: 0, turns: 0 };
      acc.answers += unattributedAnswers;
      answersByAgent.set(UNATTRIBUTED, acc);
    }
    if (d.winner !== null) {
      winsByAgent.add(d.winner);
      winsByModel.add(modelOf(d, d.winner));
    }
  }
  const known = digests
    .map((d) => d.wallClockSeconds)
    .filter((s): s is number => s !== null)
    .sort((a, b) => a - b);
  const byCost = entries
    .filter((e) => e.digest.costMicros !== null)
    .sort((a, b) => (b.digest.costMicros ?? 0) - (a.digest.costMicros ?? 0) || byRunOrder(a, b));
  const bySeconds = entries
    .filter((e) => e.digest.wallClockSeconds !== null)
    .sort((a, b) => (b.digest.wallClockSeconds ?? 0) - (a.digest.wallClockSeconds ?? 0) || byRunOrder(a, b));
  const { stories, continues } = sessionStories(dated);
  const perRun = (pick: (d: TurnDigest) => number): { total: number; mean: number; max: number } => {
    const total = sum(pick);
    return { total, mean: digests.length > 0 ? round3(total / digests.length) : 0, max: Math.max(0, ...digests.map(pick)) };
  };
  return {
    schemaVersion: 1,
    kind: 'massgen-runs-summary',
    generatedAt: options.generatedAt ?? new Date().toISOString(),
    logs: options.logs,
    filter: { since, groupBy },
    totals: {
      sessions: new Set(digests.map((d) => d.session)).size,
      turns: digests.length,
      agentRuns: sum((d) => d.agents.length),
      answers: sum((d) => d.answers),
      votes: sum((d) => d.votes),
      reVotes: sum((d) => d.reVotes),
      restarts: sum((d) => d.restarts),
      orchestrationRestarts: sum((d) => d.orchestrationRestarts),
      enforcementRetries: sum((d) => d.enforcement.reduce((s, [, , n]) => s + n, 0)),
      bufferCharsLost: sum((d) => d.bufferCharsLost),
      apiErrors: sum((d) => d.apiErrors.reduce((s, [, n]) => s + n, 0)),
      deniedToolCalls: sum((d) => (d.deniedTools ?? []).reduce((s, [, , n]) => s + n, 0)),
      costUsd: usd(costMicros),
      agentCostUsd: usd(agentCostMicros),
      wallClockSeconds: round3(known.reduce((s, x) => s + x, 0)),
      turnsWithCost: digests.filter((d) => d.costMicros !== null).length,
      turnsWithDuration: known.length,
      turnsWithWinner: digests.filter((d) => d.winner !== null).length,
      votedTurns: voted.length,
      unanimousTurns: unanimous,
      unanimousRate: voted.length > 0 ? round3(unanimous / voted.length) : null,
    },
    states: states.sorted().map(([state, turns]) => ({ state, turns })),
    perDay: [...days]
      .sort(([a], [b]) => byText(a, b))
      .map(([date, x]) => ({ date, sessions: x.sessions.size, turns: x.turns, agentRuns: x.agentRuns, costUsd: usd(x.costMicros) })),
    duration: {
      buckets: BUCKETS.map(([label, from, to]) => ({
        label,
        fromSeconds: from,
        toSeconds: to,
        turns: known.filter((s) => s >= from && (to === null || s < to)).length,
      })),
      unknown: digests.length - known.length,
      p50Seconds: percentile(known, 50),
      p90Seconds: percentile(known, 90),
      maxSeconds: known.length > 0 ? (known[known.length - 1] as number) : null,
    },
    costliest: byCost.slice(0, TOP).map(refOf),
    slowest: bySeconds.slice(0, TOP).map(refOf),
    enforcement: {
      byReason: reasons.sorted().map(([reason, retries]) => ({ reason, retries })),
      byModel: enforcementByModel.sorted().map(([key, retries]) => {
        const [model = UNKNOWN, backend = UNKNOWN] = key.split('\u0000');
        return { model, backend, retries };
      }),
    },
    apiErrors: { byBackend: apiByBackend.sorted().map(([backend, errors]) => ({ backend, errors })) },
    deniedToolCalls: {
      byAgentTool: deniedByAgentTool.sorted().map(([key, denied]) => {
        const [agent = UNKNOWN, tool = UNKNOWN] = key.split('\u0000');
        return { agent, tool, denied };
      }),
    },
    bufferCharsLost: { byModel: bufferByModel.sorted().map(([model, chars]) => ({ model, chars })) },
    winners: {
      byAgent: winsByAgent.sorted().map(([agent, wins]) => ({ agent, wins })),
      byModel: winsByModel.sorted().map(([model, wins]) => ({ model, wins })),
    },
    perRun: { reVotes: perRun((d) => d.reVotes), restarts: perRun((d) => d.restarts) },
    answersByAgent: [...answersByAgent]
      .filter(([, x]) => x.answers !== 0 || x.turns !== 0)
      .sort(([a, x], [b, y]) => y.answers - x.answers || byText(a, b))
      .map(([agent, x]) => ({ agent, answers: x.answers, turns: x.turns })),
    groups: { by: groupBy, rows: groupRows(entries, groupBy) },
    sessions: stories,
    runs: runRows(entries, continues),
  };
}
