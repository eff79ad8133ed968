// Issue #10, item 5: backend error texts (server bodies, process output) are cleaned of keys before
// they become an error message, a retry log line or anything built from them; a key cut in half by
// the error's length limit leaves no piece behind either.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { BackendError } from '../../../src/workflows/backends/errors.ts';
import { LlmClient } from '../../../src/workflows/backends/llm-client.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';

const signal = new AbortController().signal;

/** Every 6-character piece of `secret` found in `text`. */
function piecesOf(secret: string, text: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i + 6 <= secret.length; i++) if (text.includes(secret.slice(i, i + 6))) pieces.push(secret.slice(i, i + 6));
  return pieces;
}

describe('backend errors are redacted', () => {
  let server: FakeOpenAiServer;
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(() => server.close());

  it('OpenAiBackend - a 500 body echoing the request headers: no piece of the key in the error or the retry log, even where the body is cut', async () => {
    const key = 'llmkey5Value4With3No2Shape1';
    // The 500-character limit of the error text cuts the key after its 7th character.
    server.setResponder((req) => ({
      kind: 'status',
      status: 500,
      body: `${'.'.repeat(486)}${String(req.headers.authorization)} ${'.'.repeat(100)}`,
    }));
    const yaml = `backends:\n  judge: { kind: openai, base_url: "${server.url}", model: m, api_key_env: JUDGE_KEY, retry: { max: 1, base_ms: 1 } }\n`;
    const logs: string[] = [];
    const client = new LlmClient({
      config: parseBackendsConfig(yaml, 'test.yaml'),
      root: process.cwd(),
      env: { JUDGE_KEY: key },
      log: (m) => logs.push(m),
    });
    const error = await client.call('judge', { tag: 't', prompt: 'p' }, signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);
    const message = (error as BackendError).message;
    expect(message).toMatch(/HTTP 500: \.{486}Bearer \[redact/);
    expect(logs).toHaveLength(1);
    expect(piecesOf(key, [message, ...logs].join('\n'))).toEqual([]);
  });

  it('LlmClient - an answer that echoes the key is cleaned before it is cached or returned', async () => {
    const key = 'answerkey5Value4With3No2Shape1';
    server.setResponder((req) => ({ kind: 'content', content: `{"echo": "${String(req.headers.authorization)}"}` }));
    const yaml = `backends:\n  judge: { kind: openai, base_url: "${server.url}", model: m, api_key_env: ANSWER_KEY }\n`;
    const cacheDir = mkdtempSync(path.join(tmpdir(), 'refinery-cache-'));
    try {
      const client = new LlmClient({
        config: parseBackendsConfig(yaml, 'test.yaml'),
        root: process.cwd(),
        cacheDir,
        env: { ANSWER_KEY: key },
      });
      const answer = await client.call('judge', { tag: 't', prompt: 'echo' }, signal);
      expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${key}`);
      expect(answer.text).toBe('{"echo": "Bearer [redacted:secret_value]"}');
      const cached = readdirSync(cacheDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(cached.length).toBeGreaterThan(0);
      for (const file of cached) expect(readFileSync(path.join(file.parentPath, file.name), 'utf8')).not.toContain(key);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('CommandBackend - a program that prints its token and fails: no piece of the token in the error, even where the output is cut', async () => {
    const token = 'cmdtoken5Value4With3No2Shape1';
    // stderr + stdout are cut to their last 400 characters: the token straddles that cut.
    const script = `process.stderr.write('auth ' + process.env.MY_SERVICE_TOKEN + ' ' + '.'.repeat(385)); process.exit(1)`;
    const yaml = `backends:\n  agent: { kind: command, command: [node, -e, "${script}"], env: [MY_SERVICE_TOKEN], retry: { max: 0 } }\n`;
    const client = new LlmClient({
      config: parseBackendsConfig(yaml, 'test.yaml'),
      root: process.cwd(),
      env: { PATH: process.env.PATH, MY_SERVICE_TOKEN: token },
    });
    const error = await client.call('agent', { tag: 't', prompt: 'p' }, signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    const message = (error as BackendError).message;
    expect(message).toMatch(/exit 1: .*\.{385}/);
    expect(piecesOf(token, message)).toEqual([]);
  });
});
