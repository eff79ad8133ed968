/**
 * How a call's answer schema reached the model: OpenAI's `response_format` (strict when the schema fits
 * the strict subset), Ollama's `format`, the CLI's own option (`claude --json-schema`, `codex exec
 * --output-schema`, a `{schema_file}` argument), only in the prompt, `refused` (the server answered 400
 * to the schema; the call was made again with the schema in the prompt), or `none` (a replay backend).
 */
export type SchemaVia = 'response_format' | 'ollama_format' | 'cli_option' | 'prompt' | 'refused' | 'none';

/** One request to a model backend. Everything here (but `tag` and `check`) feeds the cache key. */
export interface LlmRequest {
  /** What the call is for (e.g. `evaluate`, `vote`, `repair-evaluate`); replay files are named after it. */
  tag: string;
  system?: string;
  prompt: string;
  /** The JSON Schema the answer must match: sent natively where the backend can, else in the prompt. */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  temperature?: number;
  maxTokens?: number;
  /** Whether an answer is usable as it is; its result is recorded with the call (`valid`). */
  check?: (text: string) => boolean;
}

/** What a backend returns for one successful call. */
export interface LlmResult {
  text: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Cost reported by the backend itself (claude CLI), else undefined and priced from config. */
  costUsd?: number;
  /** Set when the request had a schema. */
  schemaVia?: SchemaVia;
}

/** A finished call as the client reports it (after cache, retries and pricing). */
export interface LlmResponse extends LlmResult {
  backend: string;
  costUsd: number;
  latencyMs: number;
  cached: boolean;
  attempts: number;
}

export interface CallOptions {
  signal: AbortSignal;
}

/** The one interface every backend kind implements: one attempt, no retries, no cache. */
export interface Backend {
  readonly name: string;
  readonly kind: 'command' | 'openai' | 'replay';
  readonly model: string;
  /** Options that change answers and so belong in the cache key (never secrets). */
  readonly cacheIdentity: Readonly<Record<string, unknown>>;
  complete(request: LlmRequest, options: CallOptions): Promise<LlmResult>;
}
