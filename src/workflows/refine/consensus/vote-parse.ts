import { evaluationFromValue, type Evaluation, type ParseOutcome } from '../evaluation.ts';
import { extractJson, isRecord } from '../json-extract.ts';
import type { AnswerReader } from '../judge-call.ts';
import { judgeForLabel } from './labels.ts';

export type VoteOrAnswer = { kind: 'vote'; target: string; reason: string } | { kind: 'answer'; evaluation: Evaluation };

const VOTE_MARKER = /\{\s*"action"/;

/** Parses a voting-round reply; the vote target must be one of the labels shown. */
export function parseVoteReply(
  text: string,
  labels: ReadonlyMap<string, string>,
  shown: ReadonlySet<string>,
  ids: readonly string[],
): ParseOutcome<VoteOrAnswer> {
  const extracted = extractJson(text, VOTE_MARKER);
  if (!extracted.ok) return { ok: false, reasons: [extracted.reason] };
  return voteFromValue(extracted.value, labels, shown, ids);
}

export function voteReader(
  labels: ReadonlyMap<string, string>,
  shown: ReadonlySet<string>,
  ids: readonly string[],
): AnswerReader<VoteOrAnswer> {
  return { marker: VOTE_MARKER, parse: (value) => voteFromValue(value, labels, shown, ids) };
}

function voteFromValue(
  value: unknown,
  labels: ReadonlyMap<string, string>,
  shown: ReadonlySet<string>,
  ids: readonly string[],
): ParseOutcome<VoteOrAnswer> {
  if (!isRecord(value)) return { ok: false, reasons: ['the reply is not a JSON object'] };
  const action = typeof value.action === 'string' ? value.action.trim().toLowerCase() : '';
  const validLabels = [...labels.entries()].filter(([judge]) => shown.has(judge)).map(([, label]) => label);
  if (action === 'vote') {
    const target = typeof value.target === 'string' ? judgeForLabel(labels, value.target) : undefined;
    if (!target || !shown.has(target))
      return { ok: false, reasons: [`"target" must be one of ${validLabels.join(', ')}, got ${JSON.stringify(value.target ?? null)}`] };
    const reason = typeof value.reason === 'string' ? value.reason.trim() : '';
    return { ok: true, value: { kind: 'vote', target, reason }, complete: true, problems: [] };
  }
  if (action === 'new_answer') {
    const parsed = evaluationFromValue(value.evaluation, ids);
    if (!parsed.ok) return { ok: false, reasons: parsed.reasons.map((r) => `evaluation: ${r}`) };
    return { ok: true, value: { kind: 'answer', evaluation: parsed.value }, complete: parsed.complete, problems: parsed.problems };
  }
  return { ok: false, reasons: [`"action" must be "vote" or "new_answer", got ${JSON.stringify(value.action ?? null)}`] };
}
