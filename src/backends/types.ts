/** One request to a model backend. Everything here (but `tag` and `round`) feeds the cache key. */
export interface LlmRequest {
  /** What the call is for (e.g. `evaluate`, `vote`, `repair-evaluate`); replay files are named after it. */
  tag: string;
  system?: string;
  prompt: string;
  /** Ask for JSON matching this schema where the backend supports it (OpenAI `response_format`). */
  jsonSchema?: { name: string; schema: Record<string, unknown> };
  temperature?: number;
  maxTokens?: number;
}

/** What a backend returns for one successful call. */
export interface LlmResult {
  text: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Cost reported by the backend itself (claude CLI), else undefined and priced from config. */
  costUsd?: number;
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
