import { createHash } from 'node:crypto';

/** mulberry32: a small deterministic PRNG of floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deterministic PRNG seeded from a string, so prompts (and cache keys) are stable across reruns. */
export function seededRandom(seed: string): () => number {
  return mulberry32(createHash('sha256').update(seed).digest().readUInt32LE(0));
}

/** Fisher-Yates with a seeded PRNG; returns a new array. */
export function seededShuffle<T>(items: readonly T[], seed: string): T[] {
  const out = [...items];
  const random = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
