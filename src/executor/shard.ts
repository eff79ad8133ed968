// CI shards: `refinery run PIPELINE --shard I/N` runs the I-th of N deterministic shares of the
// pipeline's expanded stages (and what they need). Instances are dealt round-robin in plan order,
// so the items of a foreach spread evenly across the shards; a loop is dealt as one piece. Every
// job of a CI matrix expands the same checkout the same way, so the N shares cover every stage
// exactly once; what a share needs from another comes from the remote cache, or runs again.
import type { Plan } from '../model/plan.ts';

export interface Shard {
  /** 1-based. */
  index: number;
  count: number;
}

export const MAX_SHARDS = 1000;

export function parseShard(text: string): Shard | { error: string } {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) return { error: `--shard ${text}: expected I/N, e.g. 2/4 (the second of four shares)` };
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || count > MAX_SHARDS) return { error: `--shard ${text}: N must be between 1 and ${MAX_SHARDS}` };
  if (index < 1 || index > count) return { error: `--shard ${text}: I must be between 1 and N (${count})` };
  return { index, count };
}

/** The instance and loop ids of one share, in plan order. */
export function shardMembers(plan: Plan, shard: Shard): string[] {
  const ids = [...plan.instances.map((i) => i.id), ...plan.loops.map((l) => l.id)];
  return ids.filter((_, position) => position % shard.count === shard.index - 1);
}
