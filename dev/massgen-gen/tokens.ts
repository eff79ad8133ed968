// Token and cost figures for one model call, drawn from the seeded PRNG.
import type { TokenDelta } from './model.ts';
import type { Rng } from './prng.ts';

/** $ per million tokens; a model not listed costs 0 (as `scripted-model` does in the fixtures). */
const PRICES: Record<string, { input: number; output: number }> = {
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6 },
  'openai/gpt-4.1-mini': { input: 0.4, output: 1.6 },
};

export type CallKind = 'initial_answer' | 'voting' | 'presentation' | 'interrupted';

export function drawTokens(rng: Rng, model: string, kind: CallKind, seenAnswers: number): TokenDelta {
  const input =
    kind === 'initial_answer'
      ? rng.int(4000, 8500)
      : kind === 'voting'
        ? rng.int(5000, 6000) + 800 * seenAnswers
        : kind === 'presentation'
          ? rng.int(1500, 1800)
          : rng.int(3000, 6000);
  const output = kind === 'presentation' ? rng.int(90, 120) : kind === 'initial_answer' ? rng.int(50, 90) : rng.int(20, 60);
  const reasoning = kind === 'initial_answer' ? rng.int(4, 8) : rng.int(8, 18);
  const cached = kind === 'presentation' ? 0 : Math.floor(input / 2);
  const price = PRICES[model];
  const costMicros = price ? Math.round(input * price.input + output * price.output) : 0;
  return { input, output, reasoning, cached, costMicros };
}

export const zeroTokens = (): TokenDelta => ({ input: 0, output: 0, reasoning: 0, cached: 0, costMicros: 0 });

export function addTokens(a: TokenDelta, b: TokenDelta): TokenDelta {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
    cached: a.cached + b.cached,
    costMicros: a.costMicros + b.costMicros,
  };
}
