// CI shards: `refinery run PIPELINE --shard I/N` runs the I-th of N deterministic shares of the
// pipeline's expanded stages. Independent instances are dealt round-robin in plan order, so the
// items of a foreach spread evenly across the shards; a loop is dealt as one piece; a chain stays
// in one share; a fan-in across shares is left to the unsharded run after the matrix. Every job of
// a CI matrix expands the same checkout the same way, so no stage is run by two shares.
import type { Plan } from '../types/plan.ts';

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

/**
 * The instance and loop ids of one share, in plan order. Stages that need nothing are dealt
 * round-robin; every other stage goes with the stages it needs when those all fell in one share
 * (a chain stays together). A stage that needs stages of several shares (a fan-in, such as the
 * analyze pipeline's summary) is in no share: the unsharded run after the matrix runs it, with
 * everything it needs from the remote cache.
 */
export function shardMembers(plan: Plan, shard: Shard): string[] {
  const needs = new Map<string, readonly string[]>([
    ...plan.instances.map((i) => [i.id, i.needs] as const),
    ...plan.loops.map((l) => [l.id, l.needs] as const),
  ]);
  const ids = [...needs.keys()];
  const shareOf = new Map<string, number | 'several'>();
  let dealt = 0;
  const assign = (id: string, seen: Set<string>): number | 'several' => {
    const known = shareOf.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 'several'; // a cycle is reported elsewhere; keep it out of every share
    seen.add(id);
    const upstream = (needs.get(id) ?? []).filter((d) => needs.has(d));
    let share: number | 'several';
    if (upstream.length === 0) share = dealt++ % shard.count;
    else {
      const shares = new Set(upstream.map((d) => assign(d, seen)));
      share = shares.size === 1 ? ([...shares][0] as number | 'several') : 'several';
    }
    shareOf.set(id, share);
    return share;
  };
  for (const id of ids) assign(id, new Set());
  return ids.filter((id) => shareOf.get(id) === shard.index - 1);
}

/** The stages no share runs (fan-ins across shares), for the unsharded run's message. */
export function unsharded(plan: Plan, count: number): string[] {
  const all = [...plan.instances.map((i) => i.id), ...plan.loops.map((l) => l.id)];
  const covered = new Set(Array.from({ length: count }, (_, i) => shardMembers(plan, { index: i + 1, count })).flat());
  return all.filter((id) => !covered.has(id));
}
