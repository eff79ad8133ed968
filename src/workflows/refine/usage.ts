import type { LlmCallRecord } from '../backends/llm-client.ts';
import type { SchemaVia } from '../backends/types.ts';

/** One model call as a task records it in its usage.json (schema `llm-usage`). */
export interface UsageCall {
  backend: string;
  model: string;
  tag: string;
  input_tokens: number;
  output_tokens: number;
  /** What this call cost in the run that made the artifact: 0 when it was served from the cache. */
  cost_usd: number;
  cached: boolean;
  /** What the call cost when it was first made (the cache keeps it). */
  original_cost_usd: number;
  latency_ms: number;
  attempts: number;
  /** How the answer schema reached the model (`refused`: the server refused it and was asked without it). */
  schema?: SchemaVia;
  /** Whether the answer was usable as it came (parsed, matched the schema, complete); false asks for a repair. */
  valid?: boolean;
}

export interface UsageTotals {
  calls: number;
  cached_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  original_cost_usd: number;
}

/** usage.json: the calls one stage made to produce its artifacts, and when. */
export interface UsageArtifact {
  schema_version: '1';
  stage: string;
  run_id: string;
  calls: UsageCall[];
  totals: UsageTotals;
}

const SCHEMA_NOTES: Record<SchemaVia, string> = {
  response_format: 'answer schema sent as response_format (json_schema)',
  ollama_format: "answer schema sent as Ollama's format",
  cli_option: "answer schema sent through the CLI's own option",
  prompt: 'answer schema in the prompt only (the backend takes none)',
  refused: 'answer schema refused by the server; asked again with the schema in the prompt',
  none: 'no answer schema (a replayed answer)',
};

/** One line for `-v`: how a call's answer schema reached the model and whether the answer was usable. */
export function callNote(call: Pick<LlmCallRecord, 'backend' | 'tag' | 'schema' | 'valid' | 'cached'>): string {
  const how = call.schema ? SCHEMA_NOTES[call.schema] : 'no answer schema';
  const answer = call.valid === undefined ? '' : call.valid ? '; answer valid' : '; answer unusable as it came';
  return `${call.backend} ${call.tag}: ${how}${answer}${call.cached ? ' (from the cache)' : ''}`;
}

/** Rounds USD to 1e-8 so sums of floats stay readable and stable. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}

export function emptyTotals(): UsageTotals {
  return { calls: 0, cached_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, original_cost_usd: 0 };
}

export function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  return {
    calls: a.calls + b.calls,
    cached_calls: a.cached_calls + b.cached_calls,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cost_usd: roundUsd(a.cost_usd + b.cost_usd),
    original_cost_usd: roundUsd(a.original_cost_usd + b.original_cost_usd),
  };
}

export function totalsOf(calls: readonly UsageCall[]): UsageTotals {
  return calls.reduce<UsageTotals>(
    (t, c) =>
      addTotals(t, {
        calls: 1,
        cached_calls: c.cached ? 1 : 0,
        input_tokens: c.input_tokens,
        output_tokens: c.output_tokens,
        cost_usd: c.cost_usd,
        original_cost_usd: c.original_cost_usd,
      }),
    emptyTotals(),
  );
}

function toCall(r: LlmCallRecord): UsageCall {
  return {
    backend: r.backend,
    model: r.model,
    tag: r.tag,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    cost_usd: roundUsd(r.costUsd),
    cached: r.cached,
    original_cost_usd: roundUsd(r.originalCostUsd),
    latency_ms: r.latencyMs,
    attempts: r.attempts,
    ...(r.schema ? { schema: r.schema } : {}),
    ...(r.valid !== undefined ? { valid: r.valid } : {}),
  };
}

/** Collects a task's calls (passed to the client as onCall) and turns them into usage.json. */
export class UsageRecorder {
  private readonly records: LlmCallRecord[] = [];

  readonly add = (record: LlmCallRecord): void => {
    this.records.push(record);
  };

  /** Calls sorted by tag, then backend (parallel calls finish in any order). */
  artifact(stage: string, runId: string): UsageArtifact {
    const calls = this.records
      .map(toCall)
      .sort((a, b) => (a.tag === b.tag ? (a.backend < b.backend ? -1 : a.backend > b.backend ? 1 : 0) : a.tag < b.tag ? -1 : 1));
    return { schema_version: '1', stage, run_id: runId, calls, totals: totalsOf(calls) };
  }
}
