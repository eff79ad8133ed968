// Answers, votes, ignored votes and restarts of every attempt, each from the best source present:
// coordination_events.json, then snapshot_mappings.json, then snapshot dirs, then events.jsonl, then status.json.
import type { AnswerRecord, IgnoredVote, VoteRecord } from './analysis-model.ts';
import { epochOfNaive, isoOfEpoch, relative, type Clock } from './clock.ts';
import type { RunData, Snapshot } from './model.ts';

function when(clock: Clock, epoch: number | null, fallback: string | null = null): { time: string | null; at: number | null } {
  return { time: isoOfEpoch(epoch) ?? fallback, at: relative(clock, epoch) };
}

/** `agentN` label prefix: N = 1-based position of the id in sorted order (spec §2.4). */
export function labelPrefix(agentIds: string[], agentId: string): string {
  const index = [...agentIds].sort().indexOf(agentId);
  return index === -1 ? agentId : `agent${index + 1}`;
}

function snapshotByPath(run: RunData): Map<string, Snapshot> {
  return new Map(run.snapshots.map((s) => [`${s.agentId}/${s.timestamp}`, s]));
}

export function answersOf(run: RunData, clock: Clock, agentIds: string[]): AnswerRecord[] {
  const snaps = snapshotByPath(run);
  const answerSnaps = run.snapshots.filter((s) => s.kind === 'answer');
  const byLabel = new Map<string, Snapshot>();
  for (const m of run.mappings ?? []) {
    const snap = m.timestamp ? snaps.get(`${m.agentId}/${m.timestamp}`) : undefined;
    if (snap && m.type === 'answer') byLabel.set(m.label, snap);
  }
  const detail = (label: string) => byLabel.get(label)?.answer ?? null;
  const coordination = run.coordination?.events.filter((e) => e.type === 'new_answer' && e.agentId) ?? [];
  if (run.coordination && (coordination.length > 0 || !run.mappings)) {
    return coordination.map((e) => {
      const label = typeof e.context.label === 'string' ? e.context.label : e.details.replace(/^Provided answer\s*/, '');
      return {
        label,
        agentId: e.agentId ?? '?',
        attempt: run.attempt,
        ...when(clock, e.timestamp),
        chars: detail(label)?.chars ?? null,
        preview: detail(label)?.preview ?? null,
        source: 'coordination_events.json',
      };
    });
  }
  const mapped = (run.mappings ?? []).filter((m) => m.type === 'answer');
  if (mapped.length > 0) {
    return mapped.map((m) => ({
      label: m.label,
      agentId: m.agentId,
      attempt: run.attempt,
      ...when(clock, epochOfNaive(clock, m.timestamp), m.timestamp),
      chars: detail(m.label)?.chars ?? null,
      preview: detail(m.label)?.preview ?? null,
      source: 'snapshot_mappings.json',
    }));
  }
  if (answerSnaps.length > 0) {
    const counts = new Map<string, number>();
    return answerSnaps.map((s) => {
      const k = (counts.get(s.agentId) ?? 0) + 1;
      counts.set(s.agentId, k);
      return {
        label: `${labelPrefix(agentIds, s.agentId)}.${k}`,
        agentId: s.agentId,
        attempt: run.attempt,
        ...when(clock, epochOfNaive(clock, s.timestamp), s.timestamp),
        chars: s.answer?.chars ?? null,
        preview: s.answer?.preview ?? null,
        source: 'snapshot dirs',
      };
    });
  }
  return (run.events?.answers ?? []).map((a) => ({
    label: a.label ?? '?',
    agentId: a.agentId ?? '?',
    attempt: run.attempt,
    ...when(clock, epochOfNaive(clock, a.timestamp), a.timestamp),
    chars: a.content.length,
    preview: a.content.slice(0, 160),
    source: 'events.jsonl',
  }));
}

type RawVote = Omit<VoteRecord, 'superseded' | 'stale'>;

export function votesOf(run: RunData, clock: Clock): RawVote[] {
  const snaps = snapshotByPath(run);
  const cast = run.coordination?.events.filter((e) => e.type === 'vote_cast' && e.agentId) ?? [];
  if (run.coordination && (cast.length > 0 || !run.mappings)) {
    return cast.map((e) => ({
      voterId: e.agentId ?? '?',
      votedFor: str(e.context.voted_for) ?? '?',
      votedForLabel: str(e.context.voted_for_label),
      reason: str(e.context.reason) ?? '',
      attempt: run.attempt,
      ...when(clock, e.timestamp),
      source: 'coordination_events.json',
    }));
  }
  const mapped = (run.mappings ?? []).filter((m) => m.type === 'vote');
  if (mapped.length > 0) {
    return mapped.map((m) => {
      const vote = m.timestamp ? snaps.get(`${m.agentId}/${m.timestamp}`)?.vote : null;
      return {
        voterId: m.agentId,
        votedFor: m.votedFor ?? vote?.votedFor ?? '?',
        votedForLabel: m.votedForLabel ?? vote?.votedForLabel ?? null,
        reason: vote?.reason ?? '',
        attempt: run.attempt,
        ...when(clock, vote?.unixTimestamp ?? epochOfNaive(clock, m.timestamp), m.timestamp),
        source: 'snapshot_mappings.json',
      };
    });
  }
  const voteSnaps = run.snapshots.filter((s) => s.vote !== null);
  if (voteSnaps.length > 0) {
    return voteSnaps.map((s) => ({
      voterId: s.vote?.voterId ?? s.agentId,
      votedFor: s.vote?.votedFor ?? '?',
      votedForLabel: s.vote?.votedForLabel ?? null,
      reason: s.vote?.reason ?? '',
      attempt: run.attempt,
      ...when(clock, s.vote?.unixTimestamp ?? epochOfNaive(clock, s.timestamp), s.timestamp),
      source: 'vote.json',
    }));
  }
  if (run.events && run.events.votes.length > 0) {
    return run.events.votes.map((v) => ({
      voterId: v.agentId ?? '?',
      votedFor: v.targetId ?? '?',
      votedForLabel: null,
      reason: v.reason,
      attempt: run.attempt,
      ...when(clock, epochOfNaive(clock, v.timestamp), v.timestamp),
      source: 'events.jsonl',
    }));
  }
  return [];
}

/** Marks superseded votes (the voter voted again later) and stale ones (target answered again after the voted label). */
export function finishVotes(raw: RawVote[], answers: AnswerRecord[]): VoteRecord[] {
  return raw.map((v, i) => {
    const superseded = raw.some((w, j) => j > i && w.voterId === v.voterId && w.attempt === v.attempt);
    const targetAnswers = answers.filter((a) => a.agentId === v.votedFor && a.attempt === v.attempt);
    const votedIndex = v.votedForLabel ? targetAnswers.findIndex((a) => a.label === v.votedForLabel) : -1;
    const stale = votedIndex !== -1 && votedIndex < targetAnswers.length - 1;
    return { ...v, superseded, stale };
  });
}

export function ignoredVotesOf(run: RunData, clock: Clock): IgnoredVote[] {
  const fromCoordination = run.coordination?.events.filter((e) => e.type === 'vote_ignored') ?? [];
  if (run.coordination) {
    return fromCoordination.map((e) => ({
      agentId: e.agentId,
      attempt: run.attempt,
      ...when(clock, e.timestamp),
      details: e.details.slice(0, 300),
    }));
  }
  return (run.events?.ignoredVotes ?? []).map((v) => ({
    agentId: v.agentId,
    attempt: run.attempt,
    ...when(clock, epochOfNaive(clock, v.timestamp), v.timestamp),
    details: 'vote ignored: restarting due to new answers',
  }));
}

/** Agent restarts per agent: restart_completed events, else agent_restart events, else none. */
export function restartsOf(run: RunData): { byAgent: Map<string, number>; source: string } {
  const byAgent = new Map<string, number>();
  const add = (id: string | null): void => {
    if (id) byAgent.set(id, (byAgent.get(id) ?? 0) + 1);
  };
  if (run.coordination) {
    for (const e of run.coordination.events) if (e.type === 'restart_completed') add(e.agentId);
    return { byAgent, source: 'coordination_events.json restart_completed' };
  }
  if (run.events) {
    for (const r of run.events.restarts) add(r.agentId);
    return { byAgent, source: 'events.jsonl agent_restart' };
  }
  return { byAgent, source: 'none' };
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
