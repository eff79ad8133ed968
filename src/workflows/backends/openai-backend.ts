import { rememberSecret, redactSecrets } from '../../security/known-secrets.ts';
import { BackendError } from './errors.ts';
import { defaultApi, ollamaChatBody, ollamaChatUrl, readOllamaChat } from './ollama-chat.ts';
import { parseRetryAfter } from './retry.ts';
import { promptWithSchema } from './schema-prompt.ts';
import { sseData } from './sse.ts';
import { strictSchemaProblems } from './strict-schema.ts';
import type { OpenAiBackendConfig } from './config-schema.ts';
import type { Backend, CallOptions, LlmRequest, LlmResult } from './types.ts';

interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

function chatUrl(baseUrl: string): string {
  return new URL('chat/completions', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
}

/** How one attempt carries the answer schema: not at all (no schema), natively, or in the prompt. */
type SchemaMode = 'plain' | 'native' | 'prompt';

/** A server that does not take the schema answers 400 (or 422) to the request that carries it. */
function refusesSchema(error: unknown): boolean {
  return error instanceof BackendError && (error.status === 400 || error.status === 422);
}

/**
 * Any OpenAI-compatible chat completions API: OpenAI, Ollama, vLLM, llama.cpp server. An answer schema
 * goes as `response_format` (json_schema, strict when it fits OpenAI's strict subset), or as Ollama's
 * `format` on its own /api/chat; a server that refuses it is asked once more with the schema in the prompt.
 */
export class OpenAiBackend implements Backend {
  readonly kind = 'openai' as const;
  readonly model: string;
  readonly cacheIdentity: Readonly<Record<string, unknown>>;
  readonly api: 'openai' | 'ollama';
  /** Set for this process once the server refused a schema (and took the same request without it). */
  private schemaRefused = false;

  constructor(
    readonly name: string,
    private readonly config: OpenAiBackendConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.model = config.model;
    this.api = config.api ?? defaultApi(config.base_url);
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

  private messages(request: LlmRequest, mode: SchemaMode): Array<{ role: string; content: string }> {
    return [
      ...(request.system ? [{ role: 'system', content: request.system }] : []),
      { role: 'user', content: mode === 'prompt' ? promptWithSchema(request) : request.prompt },
    ];
  }

  private openAiBody(request: LlmRequest, mode: SchemaMode): Record<string, unknown> {
    const schema = mode === 'native' ? request.jsonSchema : undefined;
    return {
      model: this.config.model,
      messages: this.messages(request, mode),
      temperature: request.temperature ?? this.config.temperature,
      max_tokens: request.maxTokens ?? this.config.max_tokens,
      stream: this.config.stream,
      ...(this.config.stream ? { stream_options: { include_usage: true } } : {}),
      ...(schema
        ? {
            response_format: {
              type: 'json_schema',
              json_schema: { name: schema.name, schema: schema.schema, strict: strictSchemaProblems(schema.schema).length === 0 },
            },
          }
        : {}),
    };
  }

  async complete(request: LlmRequest, options: CallOptions): Promise<LlmResult> {
    if (!request.jsonSchema) return this.attempt(request, options, 'plain');
    if (!this.config.json_schema) return { ...(await this.attempt(request, options, 'prompt')), schemaVia: 'prompt' };
    if (this.schemaRefused) return { ...(await this.attempt(request, options, 'prompt')), schemaVia: 'refused' };
    try {
      return {
        ...(await this.attempt(request, options, 'native')),
        schemaVia: this.api === 'ollama' ? 'ollama_format' : 'response_format',
      };
    } catch (error) {
      if (!refusesSchema(error)) throw error;
      const result = await this.attempt(request, options, 'prompt');
      this.schemaRefused = true;
      return { ...result, schemaVia: 'refused' };
    }
  }

  private async attempt(request: LlmRequest, options: CallOptions, mode: SchemaMode): Promise<LlmResult> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error('timeout')), this.config.timeout_s * 1000);
    const signal = AbortSignal.any([options.signal, timeout.signal]);
    const ollama = this.api === 'ollama';
    try {
      const response = await fetch(ollama ? ollamaChatUrl(this.config.base_url) : chatUrl(this.config.base_url), {
        method: 'POST',
        headers: this.headers(),
        body: JSON.stringify(
          ollama
            ? ollamaChatBody(this.config, request, this.messages(request, mode), mode === 'native' ? request.jsonSchema?.schema : undefined)
            : this.openAiBody(request, mode),
        ),
        signal,
      });
      if (!response.ok) throw await this.httpError(response);
      if (ollama) {
        const answer = readOllamaChat(this.name, await response.text());
        return this.result(answer.content, answer.model, {
          prompt_tokens: answer.promptTokens,
          completion_tokens: answer.completionTokens,
        });
      }
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
