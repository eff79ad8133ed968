/** The three analysts of `refinery logs analyze --mode self`, as MassGen's own `--mode self` names them. */
export const PERSPECTIVES = ['correctness', 'efficiency', 'behavior'] as const;
export type Perspective = (typeof PERSPECTIVES)[number];

/** What each analyst is asked to judge (the part the deterministic report cannot). */
export const FOCUS: Readonly<Record<Perspective, string>> = {
  correctness: 'Is the winning (final) answer right and complete for the question? Compare it with the other answers and the votes.',
  efficiency: 'Time, tokens, cost, retries, restarts and tool use: where was effort wasted, and what would have been cheaper or faster?',
  behavior: 'Coordination: how the agents answered, voted and restarted, the errors they met, and why they behaved as they did.',
};

/** Backend of each analyst: the names in order, round-robin (one name serves all three). */
export function assignBackends(names: readonly string[]): Record<Perspective, string> {
  if (names.length === 0) throw new Error('assignBackends needs at least one backend name');
  return Object.fromEntries(PERSPECTIVES.map((p, i) => [p, names[i % names.length] as string])) as Record<Perspective, string>;
}
