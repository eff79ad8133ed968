import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { LlmClient, type LlmCallRecord } from '../../../src/workflows/backends/llm-client.ts';
import { BackendError } from '../../../src/workflows/backends/errors.ts';
import { defaultApi } from '../../../src/workflows/backends/ollama-chat.ts';

let server: FakeOpenAiServer;
beforeAll(async () => {
  server = await startFakeOpenAiServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.setResponder(() => ({ kind: 'content', content: 'hello there', promptTokens: 11, completionTokens: 3 }));
});

function client(extra = '', env: NodeJS.ProcessEnv = {}, calls: LlmCallRecord[] = []): LlmClient {
  const yaml = `backends:\n  judge:\n    kind: openai\n    base_url: "${server.url}"\n    model: fake-model\n    timeout_s: 0.3\n    retry: {max: 2, base_ms: 5, max_ms: 2000}\n    price: {input_per_mtok: 1000, output_per_mtok: 2000}\n${extra}`;
  return new LlmClient({ config: parseBackendsConfig(yaml, 'test.yaml'), root: process.cwd(), env, onCall: (c) => calls.push(c) });
}

const signal = new AbortController().signal;
const request = { tag: 'evaluate', prompt: 'Rate this.', system: 'You are strict.' };

describe('OpenAiBackend against a real HTTP server', () => {
  it('OpenAiBackend - plain JSON completion: text, tokens, priced cost, one llm-call record', async () => {
    const calls: LlmCallRecord[] = [];
    const out = await client('', {}, calls).call('judge', request, signal);
    expect(out).toMatchObject({ text: 'hello there', inputTokens: 11, outputTokens: 3, cached: false, attempts: 1 });
    expect(out.costUsd).toBeCloseTo((11 * 1000 + 3 * 2000) / 1e6);
    expect(server.requests[0]?.body.messages).toEqual([
      { role: 'system', content: 'You are strict.' },
      { role: 'user', content: 'Rate this.' },
    ]);
    expect(calls).toEqual([expect.objectContaining({ backend: 'judge', model: 'fake-model', tag: 'evaluate', cached: false })]);
  });

  it('OpenAiBackend - streaming (SSE) assembles the deltas and reads usage from the last chunk', async () => {
    const out = await client('    stream: true\n').call('judge', request, signal);
    expect(out.text).toBe('hello there');
    expect(out.inputTokens).toBe(11);
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('OpenAiBackend - 429 with Retry-After is retried after the given delay', async () => {
    server.enqueue({ kind: 'status', status: 429, retryAfter: '0.2' });
    const started = performance.now();
    const out = await client().call('judge', request, signal);
    expect(out.text).toBe('hello there');
    expect(out.attempts).toBe(2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(server.requests).toHaveLength(2);
  });

  it('OpenAiBackend - 500 then garbage then success: both retried', async () => {
    server.enqueue({ kind: 'status', status: 500 }, { kind: 'garbage' });
    const out = await client().call('judge', request, signal);
    expect(out.attempts).toBe(3);
  });

  it('OpenAiBackend - persistent 503 gives up after max retries with a server error', async () => {
    server.setResponder(() => ({ kind: 'status', status: 503 }));
    const error = await client()
      .call('judge', request, signal)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect((error as BackendError).kind).toBe('server');
    expect(server.requests).toHaveLength(3);
  });

  it('OpenAiBackend - a slow server times out and the timeout is retried', async () => {
    server.enqueue({ kind: 'content', content: 'late', delayMs: 1000 });
    const out = await client().call('judge', request, signal);
    expect(out.text).toBe('hello there');
    expect(out.attempts).toBe(2);
  });

  it('OpenAiBackend - a slow stream that finishes in time is fine', async () => {
    server.enqueue({ kind: 'content', content: 'slowly streamed', delayMs: 150 });
    const out = await client('    stream: true\n').call('judge', request, signal);
    expect(out.text).toBe('slowly streamed');
  });

  it('OpenAiBackend - the answer schema goes as response_format json_schema, strict when it fits the strict subset', async () => {
    const calls: LlmCallRecord[] = [];
    const c = client('', {}, calls);
    const strict = {
      name: 'verdict',
      schema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'], additionalProperties: false },
    };
    await c.call('judge', { ...request, jsonSchema: strict }, signal);
    expect(server.requests[0]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'verdict', schema: strict.schema, strict: true },
    });
    expect(server.requests[0]?.prompt).toBe('Rate this.');
    const open = { name: 'loose', schema: { type: 'object' } };
    await c.call('judge', { ...request, prompt: 'other', jsonSchema: open }, signal);
    expect(server.requests[1]?.strict).toBe(false);
    expect(calls.map((call) => call.schema)).toEqual(['response_format', 'response_format']);
  });

  it('OpenAiBackend - a server that refuses the schema (400) is asked once more with the schema in the prompt; the call records schema: refused', async () => {
    const schema = {
      name: 'verdict',
      schema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'], additionalProperties: false },
    };
    server.setResponder((req) =>
      req.body.response_format
        ? { kind: 'status', status: 400, body: '{"error":{"message":"response_format json_schema is not supported"}}' }
        : { kind: 'content', content: '{"v":"x"}' },
    );
    const calls: LlmCallRecord[] = [];
    const c = client('', {}, calls);
    const out = await c.call('judge', { ...request, jsonSchema: schema }, signal);
    expect(out).toMatchObject({ text: '{"v":"x"}', schemaVia: 'refused' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]?.body.response_format).toBeUndefined();
    expect(server.requests[1]?.prompt).toContain('## Answer schema');
    expect(server.requests[1]?.prompt).toContain(JSON.stringify(schema.schema));
    // Known now: later calls go without it at once.
    await c.call('judge', { ...request, prompt: 'other', jsonSchema: schema }, signal);
    expect(server.requests).toHaveLength(3);
    expect(calls.map((call) => call.schema)).toEqual(['refused', 'refused']);
  });

  it('OpenAiBackend - a 400 that persists without the schema is the error it is, not a refusal', async () => {
    server.setResponder(() => ({ kind: 'status', status: 400, body: '{"error":{"message":"context too long"}}' }));
    const error = await client()
      .call('judge', { ...request, jsonSchema: { name: 'v', schema: { type: 'object' } } }, signal)
      .catch((e: unknown) => e);
    expect((error as BackendError).message).toContain('context too long');
    expect(server.requests).toHaveLength(2);
  });

  it('OpenAiBackend - json_schema: false puts the schema in the prompt and records schema: prompt', async () => {
    const calls: LlmCallRecord[] = [];
    await client('    json_schema: false\n', {}, calls).call(
      'judge',
      { ...request, jsonSchema: { name: 'v', schema: { type: 'object' } } },
      signal,
    );
    expect(server.requests[0]?.body.response_format).toBeUndefined();
    expect(server.requests[0]?.prompt).toContain('## Answer schema');
    expect(calls[0]?.schema).toBe('prompt');
  });

  it("OpenAiBackend - api: ollama posts to Ollama's /api/chat with the schema as format, and reads its answer and token counts", async () => {
    server.setResponder(() => ({ kind: 'content', content: '{"v":"x"}', promptTokens: 21, completionTokens: 4 }));
    const calls: LlmCallRecord[] = [];
    const schema = {
      name: 'verdict',
      schema: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'], additionalProperties: false },
    };
    const out = await client('    api: ollama\n    temperature: 0\n', {}, calls).call('judge', { ...request, jsonSchema: schema }, signal);
    expect(out).toMatchObject({ text: '{"v":"x"}', inputTokens: 21, outputTokens: 4 });
    expect(server.requests[0]?.path).toBe('/api/chat');
    expect(server.requests[0]?.body).toMatchObject({
      model: 'fake-model',
      stream: false,
      format: schema.schema,
      options: { temperature: 0 },
    });
    expect(server.requests[0]?.body.response_format).toBeUndefined();
    expect(calls[0]?.schema).toBe('ollama_format');
  });

  it('OpenAiBackend - a base URL on port 11434 is taken for Ollama unless api says otherwise', () => {
    expect(defaultApi('http://127.0.0.1:11434/v1')).toBe('ollama');
    expect(defaultApi('https://api.openai.com/v1')).toBe('openai');
    expect(defaultApi('http://127.0.0.1:8000/v1')).toBe('openai');
  });

  it('OpenAiBackend - the key comes from the named environment variable, never from the file', async () => {
    await client('    api_key_env: FAKE_KEY\n', { FAKE_KEY: 'sk-test-123' }).call('judge', request, signal);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test-123');
    const error = await client('    api_key_env: FAKE_KEY\n', {})
      .call('judge', request, signal)
      .catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('auth');
    expect((error as Error).message).toContain('environment variable FAKE_KEY (api_key_env) is not set');
  });

  it('OpenAiBackend - a 401 is not retried', async () => {
    server.setResponder(() => ({ kind: 'status', status: 401 }));
    const error = await client()
      .call('judge', request, signal)
      .catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('auth');
    expect(server.requests).toHaveLength(1);
  });
});
