import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { parseBackendsConfig } from '../../../src/backends/config-file.ts';
import { LlmClient, type LlmCallRecord } from '../../../src/backends/llm-client.ts';
import { BackendError } from '../../../src/backends/errors.ts';

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
    const error = await client().call('judge', request, signal).catch((e: unknown) => e);
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

  it('OpenAiBackend - response_format json_schema is sent, and dropped for good when the server rejects it', async () => {
    const schema = { name: 'verdict', schema: { type: 'object' } };
    server.setResponder((req) =>
      req.body.response_format ? { kind: 'status', status: 400, body: '{"error":{"message":"response_format json_schema is not supported"}}' } : { kind: 'content', content: '{}' },
    );
    const c = client();
    expect((await c.call('judge', { ...request, jsonSchema: schema }, signal)).text).toBe('{}');
    expect(server.requests[0]?.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'verdict' } });
    expect(server.requests[1]?.body.response_format).toBeUndefined();
    await c.call('judge', { ...request, prompt: 'other', jsonSchema: schema }, signal);
    expect(server.requests).toHaveLength(3);
  });

  it('OpenAiBackend - the key comes from the named environment variable, never from the file', async () => {
    await client('    api_key_env: FAKE_KEY\n', { FAKE_KEY: 'sk-test-123' }).call('judge', request, signal);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test-123');
    const error = await client('    api_key_env: FAKE_KEY\n', {}).call('judge', request, signal).catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('auth');
    expect((error as Error).message).toContain('environment variable FAKE_KEY (api_key_env) is not set');
  });

  it('OpenAiBackend - a 401 is not retried', async () => {
    server.setResponder(() => ({ kind: 'status', status: 401 }));
    const error = await client().call('judge', request, signal).catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('auth');
    expect(server.requests).toHaveLength(1);
  });
});
