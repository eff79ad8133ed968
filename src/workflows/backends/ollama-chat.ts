import { redactSecrets } from '../../security/known-secrets.ts';
import { BackendError } from './errors.ts';
import type { OpenAiBackendConfig } from './config-schema.ts';
import type { LlmRequest } from './types.ts';

/** Ollama listens on 11434 unless told otherwise; any other server is taken for OpenAI's API. */
export function defaultApi(baseUrl: string): 'openai' | 'ollama' {
  return new URL(baseUrl).port === '11434' ? 'ollama' : 'openai';
}

/** Ollama's own chat endpoint beside its OpenAI-compatible one: `http://host:11434/v1` -> `http://host:11434/api/chat`. */
export function ollamaChatUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}/api/chat`;
  return url.toString();
}

/** The /api/chat request (never streamed); the answer schema, when given, as Ollama's `format`. */
export function ollamaChatBody(
  config: OpenAiBackendConfig,
  request: LlmRequest,
  messages: Array<{ role: string; content: string }>,
  format: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const options = Object.fromEntries(
    Object.entries({ temperature: request.temperature ?? config.temperature, num_predict: request.maxTokens ?? config.max_tokens }).filter(
      ([, v]) => v !== undefined,
    ),
  );
  return {
    model: config.model,
    messages,
    stream: false,
    ...(format ? { format } : {}),
    ...(Object.keys(options).length > 0 ? { options } : {}),
  };
}

/** The answer of /api/chat: its text, model and token counts, or a BackendError saying what was wrong. */
export function readOllamaChat(
  backend: string,
  raw: string,
): { content: string; model?: string; promptTokens?: number; completionTokens?: number } {
  let data: { model?: string; message?: { content?: unknown }; prompt_eval_count?: number; eval_count?: number; error?: unknown };
  try {
    data = JSON.parse(raw) as typeof data;
  } catch {
    throw new BackendError(backend, 'bad_response', `response is not JSON: ${redactSecrets(raw).slice(0, 120)}`);
  }
  if (data.error !== undefined)
    throw new BackendError(backend, 'other', `ollama reported ${redactSecrets(JSON.stringify(data.error)).slice(0, 300)}`);
  const content = data.message?.content;
  if (typeof content !== 'string') throw new BackendError(backend, 'bad_response', 'response has no message.content');
  return { content, model: data.model, promptTokens: data.prompt_eval_count, completionTokens: data.eval_count };
}
