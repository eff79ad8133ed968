// <agent>/<ts>/vote.json (spec §2.6). voted_for_label exists only since v0.1.27.
import { int, num, obj, str, strings } from './coerce.ts';
import type { VoteFile, WarningSink } from './model.ts';

export function parseVote(value: unknown, rel: string, warn: WarningSink, dirAgent: string): VoteFile | null {
  const v = obj(value);
  if (!v) {
    if (value !== undefined) warn(rel, 'wrong-type', 'expected a JSON object; vote ignored');
    return null;
  }
  const votedFor = str(v.voted_for);
  if (!votedFor) {
    warn(rel, 'wrong-type', '`voted_for` is missing or not a string; vote ignored');
    return null;
  }
  return {
    voterId: str(v.voter_id) ?? dirAgent,
    votedFor,
    votedForLabel: str(v.voted_for_label),
    reason: str(v.reason) ?? '',
    unixTimestamp: num(v.unix_timestamp),
    iteration: int(v.iteration),
    coordinationRound: int(v.coordination_round),
    availableOptions: strings(v.available_options),
  };
}
