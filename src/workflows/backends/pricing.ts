import type { PriceConfig } from './config-schema.ts';
import type { LlmResult } from './types.ts';

/** The backend's own reported cost when it gives one, else tokens priced from the config (0 without a price). */
export function costOf(result: LlmResult, price: PriceConfig | undefined): number {
  if (result.costUsd !== undefined) return result.costUsd;
  if (!price) return 0;
  return (result.inputTokens * price.input_per_mtok + result.outputTokens * price.output_per_mtok) / 1_000_000;
}
