// One turn's analysis.json reduced to what the cross-run summary adds up (TurnDigest). Pure.
// The analysis is read defensively: a file written by an older refinery may lack newer fields.
import { arr, num, obj, str } from './coerce.ts';
import type { TurnDigest } from './runs-summary-model.ts';

const DATE = /^(\d{4}-\d{2}-\d{2})T/;
const SESSION_DATE = /^log_(\d{4})(\d{2})(\d{2})_/;

export const toMicros = (usd: number): number => Math.round(usd * 1e6);

function count(value: unknown): number {
  const n = num(value);
  return n !== null && n > 0 ? Math.round(n) : 0;
}

function firstDate(analysis: Record<string, unknown>, session: string): string | null {
  const times = [...arr(analysis.coordinationFlow), ...arr(analysis.answers), ...arr(analysis.votes)]
    .map((e) => str(obj(e)?.time))
    .filter((t): t is string => t !== null && DATE.test(t))
    .sort();
  const fromEvents = times[0] ? (DATE.exec(times[0])?.[1] ?? null) : null;
  if (fromEvents) return fromEvents;
  const m = SESSION_DATE.exec(session);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : null;
}

/** Every agent's current vote in the last attempt named the same agent (all agents voted). */
function unanimity(votes: Record<string, unknown>[], agents: number): boolean | null {
  const lastAttempt = Math.max(0, ...votes.map((v) => num(v.attempt) ?? 0));
  const current = new Map<string, string>();
  for (const v of votes) {
    if ((num(v.attempt) ?? 0) !== lastAttempt || v.superseded === true) continue;
    const voter = str(v.voterId);
    const target = str(v.votedFor);
    if (voter && target) current.set(voter, target);
  }
  if (current.size === 0) return null;
  return current.size >= agents && new Set(current.values()).size === 1;
}

function tally<K>(keys: K[]): [K, number][] {
  const counts = new Map<K, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts];
}

export function digestOf(raw: unknown): TurnDigest | null {
  const a = obj(raw);
  const source = obj(a?.source);
  const session = str(source?.session);
  if (a?.kind !== 'massgen-turn-analysis' || !source || !session) return null;
  const overview = obj(a.overview) ?? {};
  const errors = obj(a.errors) ?? {};
  const winner = obj(a.winner);
  const cost = num(overview.totalCostUsd);
  const votes = arr(a.votes)
    .map(obj)
    .filter((v): v is Record<string, unknown> => v !== null);
  const agents = arr(a.agents)
    .map(obj)
    .filter((x): x is Record<string, unknown> => x !== null && str(x.id) !== null)
    .map((x) => {
      const agentCost = num(x.costUsd);
      return {
        id: str(x.id) as string,
        model: str(x.model),
        backend: str(x.backend),
        answers: count(x.answers),
        votesCast: count(x.votesCast),
        restarts: count(x.restarts),
        bufferCharsLost: count(x.bufferCharsLost),
        costMicros: agentCost === null ? null : toMicros(agentCost),
      };
    });
  const sessionMark = obj(source.massgenSession);
  const role = str(sessionMark?.role);
  const rows = arr(errors.enforcement)
    .map(obj)
    .filter((r): r is Record<string, unknown> => r !== null);
  const enforcement = tally(rows.map((r) => `${str(r.reason) ?? 'unknown'}\u0000${str(r.agentId) ?? '?'}`)).map(([k, n]) => {
    const [reason = 'unknown', agent = '?'] = k.split('\u0000');
    return [reason, agent, n] as [string, string, number];
  });
  return {
    session,
    turn: count(source.turn),
    turnDir: str(source.turnDir),
    attempts: arr(source.attempts).length,
    date: firstDate(a, session),
    state: str(obj(a.state)?.value) ?? 'unknown',
    question: str(a.question)?.slice(0, 300) ?? null,
    wallClockSeconds: num(overview.wallClockSeconds),
    costMicros: cost === null ? null : toMicros(cost),
    answers: count(overview.answers),
    votes: count(overview.votes),
    reVotes: votes.filter((v) => v.superseded === true).length,
    restarts: count(overview.restarts),
    orchestrationRestarts: count(overview.orchestrationRestarts),
    bufferCharsLost: count(errors.bufferCharsLost),
    winner: str(winner?.agentId),
    unanimous: unanimity(votes, agents.length),
    config: str(obj(a.config)?.configPath),
    massgenSession:
      sessionMark && str(sessionMark.id) && (role === 'created' || role === 'continued' || role === 'member')
        ? { id: str(sessionMark.id) as string, role, evidence: str(sessionMark.evidence) ?? '' }
        : null,
    agents,
    enforcement,
    apiErrors: tally(arr(errors.apiErrors).map((e) => str(obj(e)?.agentId))),
    deniedTools: tally(arr(errors.deniedToolCalls).map((e) => `${str(obj(e)?.agentId) ?? ''}\u0000${str(obj(e)?.tool) ?? 'unknown'}`)).map(
      ([k, n]) => {
        const [agent = '', tool = 'unknown'] = (k ?? '').split('\u0000');
        return [agent === '' ? null : agent, tool, n] as [string | null, string, number];
      },
    ),
  };
}
