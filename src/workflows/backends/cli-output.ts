import { redactSecrets } from '../../security/known-secrets.ts';
import { BackendError, type BackendErrorKind } from './errors.ts';
import type { OutputFormat } from './presets.ts';
import type { LlmResult } from './types.ts';

type Json = Record<string, unknown>;

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

function kindFromText(text: string): BackendErrorKind {
  if (/\b429\b|rate.?limit|too many requests/i.test(text)) return 'rate_limit';
  if (/\b5\d\d\b|overloaded|internal server error|unavailable/i.test(text)) return 'server';
  if (/auth|api key|unauthori[sz]ed|login|credential/i.test(text)) return 'auth';
  return 'other';
}

/** The last line of stdout that parses as a JSON object (CLIs may print noise before it). */
function lastJsonObject(stdout: string): Json | undefined {
  const trimmed = stdout.trim();
  try {
    const whole = JSON.parse(trimmed) as unknown;
    if (whole && typeof whole === 'object' && !Array.isArray(whole)) return whole as Json;
  } catch {
    // fall through to line scan
  }
  const lines = trimmed.split('\n').reverse();
  for (const line of lines) {
    try {
      const value = JSON.parse(line) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

function parseClaude(backend: string, model: string, stdout: string): LlmResult {
  const data = lastJsonObject(stdout);
  if (!data) throw new BackendError(backend, 'bad_response', `claude printed no JSON result: ${redactSecrets(stdout).slice(0, 120)}`);
  if (data.is_error === true || (typeof data.subtype === 'string' && data.subtype !== 'success')) {
    const detail = `${String(data.subtype ?? 'error')}: ${String(data.result ?? '')}`;
    throw new BackendError(backend, kindFromText(detail), `claude reported ${detail}`);
  }
  // With --json-schema the validated answer is `structured_output`; `result` may then be prose.
  const structured = data.structured_output;
  const text = structured !== null && typeof structured === 'object' ? JSON.stringify(structured) : data.result;
  if (typeof text !== 'string') throw new BackendError(backend, 'bad_response', 'claude JSON has no string "result"');
  const usage = (data.usage ?? {}) as Json;
  const modelUsage = data.modelUsage && typeof data.modelUsage === 'object' ? Object.keys(data.modelUsage as Json) : [];
  const cost = data.total_cost_usd ?? data.cost_usd;
  return {
    text,
    model: modelUsage[0] ?? model,
    inputTokens: num(usage.input_tokens) + num(usage.cache_creation_input_tokens) + num(usage.cache_read_input_tokens),
    outputTokens: num(usage.output_tokens),
    costUsd: typeof cost === 'number' ? cost : undefined,
  };
}

function parseCodex(backend: string, model: string, stdout: string): LlmResult {
  let text: string | undefined;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let event: Json;
    try {
      event = JSON.parse(line) as Json;
    } catch {
      continue;
    }
    const item = event.item as Json | undefined;
    if (event.type === 'item.completed' && item?.type === 'agent_message' && typeof item.text === 'string') text = item.text;
    if (event.type === 'turn.completed') {
      const usage = (event.usage ?? {}) as Json;
      inputTokens += num(usage.input_tokens);
      outputTokens += num(usage.output_tokens);
    }
    if (event.type === 'turn.failed' || event.type === 'error') {
      const message = String((event.error as Json | undefined)?.message ?? event.message ?? 'error');
      throw new BackendError(backend, kindFromText(message), `codex reported ${message}`);
    }
  }
  if (text === undefined) throw new BackendError(backend, 'bad_response', 'codex printed no agent_message');
  return { text, model, inputTokens, outputTokens };
}

function parseGemini(backend: string, model: string, stdout: string): LlmResult {
  const data = lastJsonObject(stdout);
  if (!data) throw new BackendError(backend, 'bad_response', `gemini printed no JSON: ${redactSecrets(stdout).slice(0, 120)}`);
  if (data.error) {
    const message = JSON.stringify(data.error);
    throw new BackendError(backend, kindFromText(message), `gemini reported ${message}`);
  }
  if (typeof data.response !== 'string') throw new BackendError(backend, 'bad_response', 'gemini JSON has no string "response"');
  const models = ((data.stats as Json | undefined)?.models ?? {}) as Record<string, Json>;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const entry of Object.values(models)) {
    const tokens = (entry.tokens ?? {}) as Json;
    inputTokens += num(tokens.prompt ?? tokens.input);
    outputTokens += num(tokens.candidates) + num(tokens.thoughts);
  }
  return { text: data.response, model: Object.keys(models)[0] ?? model, inputTokens, outputTokens };
}

/** Turns a CLI's stdout into a result; exit status is judged by the caller. */
export function parseCliOutput(format: OutputFormat, backend: string, model: string, stdout: string): LlmResult {
  switch (format) {
    case 'claude-json':
      return parseClaude(backend, model, stdout);
    case 'codex-jsonl':
      return parseCodex(backend, model, stdout);
    case 'gemini-json':
      return parseGemini(backend, model, stdout);
    case 'text':
      return { text: stdout.trim(), model, inputTokens: 0, outputTokens: 0 };
  }
}

export { kindFromText };
