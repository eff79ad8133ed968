import { performance } from 'node:perf_hooks';
import { assertGateOpen, Budget, type SpendGate } from './budget.ts';
import { cacheKey } from './cache-key.ts';
import { createBackend, DEFAULT_CONCURRENCY } from './create-backend.ts';
import { BackendConfigError } from './errors.ts';
import { costOf } from './pricing.ts';
import { ResponseCache } from './response-cache.ts';
import { withRetry } from './retry.ts';
import { WorkQueue } from '../../engine/executor/work-queue.ts';
import { redactSecrets, rememberSecretsOf } from '../../security/known-secrets.ts';
import type { BackendConfig, BackendsConfig } from './config-schema.ts';
import type { Backend, LlmRequest, LlmResponse, SchemaVia } from './types.ts';
import type { RemoteResponses } from './remote-responses.ts';

export interface LlmCallRecord {
  backend: string;
  model: string;
  tag: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** What the call cost when it was made: equals costUsd for a new call, the recorded cost for a cache hit. */
  originalCostUsd: number;
  latencyMs: number;
  cached: boolean;
  /** Where a cached answer came from: this machine's cache or the shared remote one. */
  cacheSource?: 'local' | 'remote';
  /** The provider, as the OpenTelemetry GenAI conventions name it (gen_ai.system). */
  system?: string;
  attempts: number;
  /** How the answer schema reached the model, when the request had one. */
  schema?: SchemaVia;
  /** The request's own check of the answer, when it gave one. */
  valid?: boolean;
}

export interface LlmClientOptions {
  config: BackendsConfig;
  root: string;
  /** Response cache directory; undefined disables caching. */
  cacheDir?: string;
  budget?: Budget;
  /** A second limit someone else owns and charges (the engine's run budget); checked before each uncached call. */
  gate?: SpendGate;
  /** Called once per finished call (cached or not). */
  onCall?: (record: LlmCallRecord) => void;
  /** Human-readable notes (retries). */
  log?: (message: string) => void;
  /** Problems worth a warning (a damaged cache entry set aside). */
  warn?: (message: string) => void;
  env?: NodeJS.ProcessEnv;
  /** A shared cache behind the local one (`remote_cache` in refinery.config.yaml): asked after a local miss, told every new answer. */
  remote?: RemoteResponses;
}

function apiKeyEnvNames(config: BackendsConfig): string[] {
  return Object.values(config.backends).flatMap((entry) => (entry.kind === 'openai' && entry.api_key_env ? [entry.api_key_env] : []));
}

/** The provider behind a backend, in the words of the OpenTelemetry GenAI conventions' gen_ai.system. */
export function genAiSystem(config: BackendConfig): string {
  if (config.kind === 'openai') return config.api === 'ollama' || /:11434(\/|$)/.test(config.base_url) ? 'ollama' : 'openai';
  if (config.kind === 'command')
    return config.preset === 'claude'
      ? 'anthropic'
      : config.preset === 'codex'
        ? 'openai'
        : config.preset === 'gemini'
          ? 'gcp.gemini'
          : 'command';
  return 'replay';
}

const pools = new Map<string, WorkQueue>();

/** One pool of calls per backend name and limit, shared by every task in this process. */
function poolFor(backend: string, limit: number): WorkQueue {
  const key = `${backend}\u0000${limit}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new WorkQueue(limit);
    pools.set(key, pool);
  }
  return pool;
}

/** Calls backends by name with cache, per-backend pool, retries with backoff, budget and call records. */
export class LlmClient {
  readonly budget: Budget;
  private readonly backends = new Map<string, Backend>();
  private readonly cache: ResponseCache | undefined;

  constructor(private readonly options: LlmClientOptions) {
    this.budget = options.budget ?? new Budget();
    this.cache = options.cacheDir
      ? new ResponseCache(options.cacheDir, { root: options.root, ...(options.warn ? { warn: options.warn } : {}) })
      : undefined;
    // Known before any call, so an error from any backend is cleaned of every configured key.
    rememberSecretsOf(options.env ?? process.env, apiKeyEnvNames(options.config));
  }

  /** True once either the client's budget or the gate (the run's budget) allows no new paid call. */
  get budgetExhausted(): boolean {
    return this.budget.exhausted || this.options.gate?.canSpend() === false;
  }

  /** Names configured, sorted. */
  get names(): string[] {
    return Object.keys(this.options.config.backends).sort();
  }

  private entry(name: string): BackendConfig {
    const config = this.options.config.backends[name];
    if (!config)
      throw new BackendConfigError(
        `${this.options.config.file}: no backend named '${name}'; configured: ${this.names.join(', ') || '(none)'}`,
      );
    return config;
  }

  backend(name: string): Backend {
    let backend = this.backends.get(name);
    if (!backend) {
      backend = createBackend(name, this.entry(name), this.options.root, this.options.env);
      this.backends.set(name, backend);
    }
    return backend;
  }

  keyFor(name: string, request: LlmRequest): string {
    const backend = this.backend(name);
    return cacheKey({
      backend: name,
      kind: backend.kind,
      model: backend.model,
      identity: backend.cacheIdentity,
      system: request.system,
      prompt: request.prompt,
      jsonSchema: request.jsonSchema,
      temperature: request.temperature,
      maxTokens: request.maxTokens,
    });
  }

  async call(name: string, request: LlmRequest, signal: AbortSignal): Promise<LlmResponse> {
    const config = this.entry(name);
    const backend = this.backend(name);
    const key = this.keyFor(name, request);
    let hit = this.cache?.get(key);
    let source: 'local' | 'remote' = 'local';
    if (!hit && this.options.remote) {
      hit = await this.options.remote.get(key, this.options.warn);
      source = 'remote';
      if (hit) this.cache?.put(hit);
    }
    if (hit)
      return this.finish(
        request,
        { ...hit.result, backend: name, costUsd: 0, latencyMs: 0, cached: true, attempts: 0 },
        hit.costUsd,
        config,
        source,
      );
    const pool = poolFor(name, config.concurrency ?? DEFAULT_CONCURRENCY[config.kind]);
    return pool.run(async () => {
      this.budget.assertAvailable();
      assertGateOpen(this.options.gate);
      const started = performance.now();
      const { value: raw, attempts } = await withRetry(
        config.retry,
        signal,
        () => backend.complete(request, { signal }),
        (error, delay, n) => this.options.log?.(`${name}: ${error.kind} (${error.message}); retry ${n} in ${delay} ms`),
      );
      // A proxy or an agent CLI can echo credentials into an answer; it goes to the cache and artifacts.
      const value = { ...raw, text: redactSecrets(raw.text) };
      const latencyMs = Math.round(performance.now() - started);
      const costUsd = costOf(value, config.price);
      this.budget.charge(costUsd);
      const entry = { key, backend: name, result: value, costUsd, latencyMs, savedAt: new Date().toISOString() };
      this.cache?.put(entry);
      this.options.remote?.put(entry, this.options.warn);
      return this.finish(request, { ...value, backend: name, costUsd, latencyMs, cached: false, attempts }, costUsd, config);
    }, signal);
  }

  private finish(
    request: LlmRequest,
    response: LlmResponse,
    originalCostUsd: number,
    config: BackendConfig,
    cacheSource?: 'local' | 'remote',
  ): LlmResponse {
    this.options.onCall?.({
      backend: response.backend,
      model: response.model,
      tag: request.tag,
      inputTokens: response.inputTokens,
      outputTokens: response.outputTokens,
      costUsd: response.costUsd,
      originalCostUsd: Number.isFinite(originalCostUsd) ? originalCostUsd : 0,
      latencyMs: response.latencyMs,
      cached: response.cached,
      ...(response.cached && cacheSource ? { cacheSource } : {}),
      system: genAiSystem(config),
      attempts: response.attempts,
      ...(response.schemaVia ? { schema: response.schemaVia } : {}),
      ...(request.check ? { valid: request.check(response.text) } : {}),
    });
    return response;
  }
}
