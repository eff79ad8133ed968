import { rememberSecret, redactSecrets } from '../security/known-secrets.ts';
import { BackendError } from './errors.ts';
import { parseRetryAfter } from './retry.ts';
import { sseData } from './sse.ts';
import type { OpenAiBackendConfig } from './config-schema.ts';
import type { Backend, CallOptions, LlmRequest, LlmResult } from './types.ts';

interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

function chatUrl(baseUrl: string): string {
  return new URL('chat/completions', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}

/** Any OpenAI-compatible chat completions API: OpenAI, Ollama, vLLM, llama.cpp server. */
export class OpenAiBackend implements Backend {
  readonly kind = 'openai' as const;
  readonly model: string;
  readonly cacheIdentity: Readonly<Record<string, unknown>>;
  /** Turned off for this process when the server rejects `response_format`. */
  private jsonSchemaSupported: boolean;

  constructor(
    readonly name: string,
    private readonly config: OpenAiBackendConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.model = config.model;
    this.jsonSchemaSupported = config.json_schema;
    this.cacheIdentity = { base_url: config.base_url, temperature: config.temperature, max_tokens: config.max_tokens };
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const keyName = this.config.api_key_env;
    if (keyName) {
      const key = this.env[keyName];
      if (!key) throw new BackendError(this.name, 'auth', `environment variable ${keyName} (api_key_env) is not set`);
      rememberSecret(key);
      headers.authorization = `Bearer ${key}`;
    }
    return headers;
  }

  private body(request: LlmRequest, withSchema: boolean): Record<string, unknown> {
    const messages = [
      ...(request.system ? [{ role: 'system', content: request.system }] : []),
      { role: 'user', content: request.prompt },
    ];
    return {
      model: this.config.model,
      messages,
      temperature: request.temperature ?? this.config.temperature,
      max_tokens: request.maxTokens ?? this.config.max_tokens,
      stream: this.config.stream,
      ...(this.config.stream ? { stream_options: { include_usage: true } } : {}),
      ...(withSchema && request.jsonSchema
        ? { response_format: { type: 'json_schema', json_schema: { name: request.jsonSchema.name, schema: request.jsonSchema.schema, strict: false } } }
        : {}),
    };
  }

  async complete(request: LlmRequest, options: CallOptions): Promise<LlmResult> {
    const withSchema = this.jsonSchemaSupported && request.jsonSchema !== undefined;
    try {
      return await this.attempt(request, options, withSchema);
    } catch (error) {
      if (withSchema && error instanceof BackendError && error.status === 400 && /response_format|json_schema/i.test(error.message)) {
        this.jsonSchemaSupported = false;
        return this.attempt(request, options, false);
      }
      throw error;
    }
  }

  private async attempt(request: LlmRequest, options: CallOptions, withSchema: boolean): Promise<LlmResult> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error('timeout')), this.config.timeout_s * 1000);
    const signal = AbortSignal.any([options.signal, timeout.signal]);
    try {
      const response = await fetch(chatUrl(this.config.base_url), {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(this.body(request, withSchema)),
        signal,
      });
      if (!response.ok) throw await this.httpError(response);
      return this.config.stream ? await this.readStream(response) : await this.readJson(response);
    } catch (error) {
      if (error instanceof BackendError) throw error;
      if (options.signal.aborted) throw new BackendError(this.name, 'aborted', 'call aborted');
      if (timeout.signal.aborted) throw new BackendError(this.name, 'timeout', `no complete answer within ${this.config.timeout_s} s`);
      throw new BackendError(this.name, 'network', `request failed: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private async httpError(response: Response): Promise<BackendError> {
    // Redacted before truncation: a cut could leave a key's prefix that no longer matches it.
    const text = redactSecrets(await response.text().catch(() => '')).slice(0, 500);
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    const status = response.status;
    const message = `HTTP ${status}: ${text.replace(/\s+/g, ' ').trim()}`;
    if (status === 429) return new BackendError(this.name, 'rate_limit', message, { status, retryAfterMs });
    if (status >= 500) return new BackendError(this.name, 'server', message, { status, retryAfterMs });
    if (status === 408) return new BackendError(this.name, 'timeout', message, { status });
    if (status === 401 || status === 403) return new BackendError(this.name, 'auth', message, { status });
    return new BackendError(this.name, 'other', message, { status });
  }

  private async readJson(response: Response): Promise<LlmResult> {
    const raw = await response.text();
    let data: { model?: string; choices?: Array<{ message?: { content?: unknown } }>; usage?: ChatUsage };
    try {
      data = JSON.parse(raw) as typeof data;
    } catch {
      throw new BackendError(this.name, 'bad_response', `response is not JSON: ${redactSecrets(raw).slice(0, 120)}`);
    }
    const content = data.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new BackendError(this.name, 'bad_response', 'response has no choices[0].message.content');
    return this.result(content, data.model, data.usage);
  }

  private async readStream(response: Response): Promise<LlmResult> {
    if (!response.body) throw new BackendError(this.name, 'bad_response', 'streaming response has no body');
    let text = '';
    let usage: ChatUsage | undefined;
    let model: string | undefined;
    for await (const data of sseData(response.body)) {
      let chunk: { model?: string; choices?: Array<{ delta?: { content?: unknown } }>; usage?: ChatUsage | null };
      try {
        chunk = JSON.parse(data) as typeof chunk;
      } catch {
        throw new BackendError(this.name, 'bad_response', `stream event is not JSON: ${redactSecrets(data).slice(0, 120)}`);
      }
      const delta = chunk.choices?.[0]?.delta?.content;
      if (typeof delta === 'string') text += delta;
      if (chunk.usage) usage = chunk.usage;
      model ??= chunk.model;
    }
    return this.result(text, model, usage);
  }

  private result(text: string, model: string | undefined, usage: ChatUsage | undefined): LlmResult {
    return {
      text,
      model: model ?? this.config.model,
      inputTokens: usage?.prompt_tokens ?? 0,
      outputTokens: usage?.completion_tokens ?? 0,
    };
  }
}
