import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { LlmClient, type LlmCallRecord } from '../../../src/workflows/backends/llm-client.ts';
import { BackendError } from '../../../src/workflows/backends/errors.ts';

const CLIS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../helpers/fake-agent-clis');
const dir = mkdtempSync(path.join(tmpdir(), 'refinery-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROMPT = 'Evaluate this deliverable; it contains $HOME `whoami` and "quotes" that must not reach a shell.';

function setup(name: string, backendYaml: string, env: Record<string, string> = {}, calls: LlmCallRecord[] = []) {
  const log = path.join(dir, `${name}.jsonl`);
  const reply = path.join(dir, `${name}.reply`);
  writeFileSync(reply, `{"answer": "${name}"}`);
  const yaml = `backends:\n  ${name}:\n${backendYaml}    env: [FAKE_AGENT_LOG, FAKE_AGENT_REPLY_FILE, FAKE_AGENT_MODE, FAKE_AGENT_DELAY_MS]\n    retry: {max: 1, base_ms: 5}\n`;
  const client = new LlmClient({
    config: parseBackendsConfig(yaml, 'test.yaml'),
    root: dir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      FAKE_AGENT_LOG: log,
      FAKE_AGENT_REPLY_FILE: reply,
      SECRET_NOT_PASSED: 'x',
      ...env,
    },
    onCall: (call) => calls.push(call),
  });
  const invocations = () =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { cli: string; argv: string[]; stdin: string });
  return { client, invocations };
}

const signal = new AbortController().signal;

describe('CommandBackend with fake agent CLIs', () => {
  it('CommandBackend - claude preset: prompt on stdin, result/cost/usage from its JSON', async () => {
    const { client, invocations } = setup(
      'claude',
      `    kind: command\n    preset: claude\n    model: sonnet\n    executable: ${CLIS}/claude\n`,
    );
    const out = await client.call('claude', { tag: 'evaluate', prompt: PROMPT }, signal);
    expect(out).toMatchObject({ text: '{"answer": "claude"}', model: 'sonnet', inputTokens: 3009, outputTokens: 90, costUsd: 0.0127 });
    const [call] = invocations();
    expect(call?.argv).toEqual(['-p', '--output-format', 'json', '--model', 'sonnet']);
    expect(call?.stdin).toBe(PROMPT);
  });

  it('CommandBackend - codex preset: last agent_message, usage from --json events, priced from config', async () => {
    const { client, invocations } = setup(
      'codex',
      `    kind: command\n    preset: codex\n    model: gpt-5.4\n    executable: ${CLIS}/codex\n    price: {input_per_mtok: 1, output_per_mtok: 10}\n`,
    );
    const out = await client.call('codex', { tag: 'evaluate', prompt: PROMPT }, signal);
    expect(out).toMatchObject({ text: '{"answer": "codex"}', inputTokens: 24763, outputTokens: 122 });
    expect(out.costUsd).toBeCloseTo((24763 + 1220) / 1e6);
    expect(invocations()[0]?.argv).toEqual(['exec', '--json', '--skip-git-repo-check', '-m', 'gpt-5.4', '-']);
    expect(invocations()[0]?.stdin).toBe(PROMPT);
  });

  it('CommandBackend - gemini preset: response and stats; stdin carries the prompt', async () => {
    const { client, invocations } = setup('gemini', `    kind: command\n    preset: gemini\n    executable: ${CLIS}/gemini\n`);
    const out = await client.call('gemini', { tag: 'evaluate', prompt: PROMPT }, signal);
    expect(out).toMatchObject({ text: '{"answer": "gemini"}', model: 'gemini-fake-pro', inputTokens: 500, outputTokens: 60 });
    expect(invocations()[0]?.stdin).toBe(PROMPT);
    expect(invocations()[0]?.argv.join(' ')).not.toContain('Evaluate this deliverable');
  });

  it('CommandBackend - custom argument template with {prompt_file}: the prompt arrives as a file, not argv text', async () => {
    const script = path.join(dir, 'custom.mjs');
    writeFileSync(
      script,
      "import { readFileSync } from 'node:fs';\nconst [, , flag, file] = process.argv;\nprocess.stdout.write(`${flag}|${readFileSync(file, 'utf8').length}|${file.endsWith('prompt.md')}`);\n",
    );
    const { client } = setup(
      'custom',
      `    kind: command\n    command: [node, ${script}, "--model={model}", "{prompt_file}"]\n    model: tiny\n`,
    );
    const out = await client.call('custom', { tag: 'evaluate', prompt: PROMPT }, signal);
    expect(out.text).toBe(`--model=tiny|${PROMPT.length}|true`);
  });

  const SCHEMA = {
    name: 'answer',
    schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false },
  };

  it('CommandBackend - claude preset with an answer schema: --json-schema carries it, the answer is structured_output', async () => {
    const calls: LlmCallRecord[] = [];
    const { client, invocations } = setup(
      'claude-schema',
      `    kind: command\n    preset: claude\n    model: sonnet\n    executable: ${CLIS}/claude\n`,
      {},
      calls,
    );
    const out = await client.call('claude-schema', { tag: 'evaluate', prompt: PROMPT, jsonSchema: SCHEMA }, signal);
    expect(JSON.parse(out.text)).toEqual({ answer: 'claude-schema' });
    const [call] = invocations();
    expect(call?.argv).toEqual(['-p', '--output-format', 'json', '--model', 'sonnet', '--json-schema', JSON.stringify(SCHEMA.schema)]);
    expect(call?.stdin).toBe(PROMPT);
    expect(calls[0]?.schema).toBe('cli_option');
  });

  it('CommandBackend - codex preset with an answer schema: --output-schema names a file holding it, before the stdin marker', async () => {
    const calls: LlmCallRecord[] = [];
    const { client, invocations } = setup(
      'codex-schema',
      `    kind: command\n    preset: codex\n    executable: ${CLIS}/codex\n`,
      {},
      calls,
    );
    await client.call('codex-schema', { tag: 'evaluate', prompt: PROMPT, jsonSchema: SCHEMA }, signal);
    const [call] = invocations() as Array<{ argv: string[]; stdin: string; outputSchema?: unknown }>;
    const at = call?.argv.indexOf('--output-schema') ?? -1;
    expect(at).toBeGreaterThan(0);
    expect(call?.argv.at(-1)).toBe('-');
    expect(call?.outputSchema).toEqual(SCHEMA.schema);
    expect(existsSync(call?.argv[at + 1] as string)).toBe(false);
    expect(calls[0]?.schema).toBe('cli_option');
  });

  it('CommandBackend - gemini (no schema option) gets the schema in the prompt; a {schema_file} template gets a file', async () => {
    const calls: LlmCallRecord[] = [];
    const gemini = setup('gemini-schema', `    kind: command\n    preset: gemini\n    executable: ${CLIS}/gemini\n`, {}, calls);
    await gemini.client.call('gemini-schema', { tag: 'evaluate', prompt: PROMPT, jsonSchema: SCHEMA }, signal);
    expect(gemini.invocations()[0]?.stdin).toBe(
      `${PROMPT}\n\n## Answer schema\n\nYour answer must be exactly one JSON object valid against this JSON Schema (no prose, no code fence):\n\n${JSON.stringify(SCHEMA.schema)}`,
    );
    const script = path.join(dir, 'schema-file.mjs');
    writeFileSync(script, "import { readFileSync } from 'node:fs';\nprocess.stdout.write(readFileSync(process.argv[2], 'utf8'));\n");
    const custom = setup('custom-schema', `    kind: command\n    command: [node, ${script}, "{schema_file}"]\n`, {}, calls);
    const out = await custom.client.call('custom-schema', { tag: 'evaluate', prompt: PROMPT, jsonSchema: SCHEMA }, signal);
    expect(JSON.parse(out.text)).toEqual(SCHEMA.schema);
    expect(calls.map((c) => c.schema)).toEqual(['prompt', 'cli_option']);
  });

  it('CommandBackend - environment is an allowlist: unlisted variables never reach the child', async () => {
    const script = path.join(dir, 'env.mjs');
    writeFileSync(
      script,
      'process.stdout.write(JSON.stringify({ secret: process.env.SECRET_NOT_PASSED ?? null, log: Boolean(process.env.FAKE_AGENT_LOG) }));\n',
    );
    const { client } = setup('envcheck', `    kind: command\n    command: [node, ${script}]\n`);
    const out = await client.call('envcheck', { tag: 't', prompt: 'x' }, signal);
    expect(JSON.parse(out.text)).toEqual({ secret: null, log: true });
  });

  it('CommandBackend - a CLI rate-limit error is retried; a plain failure is a process error', async () => {
    const limited = setup('claude', `    kind: command\n    preset: claude\n    executable: ${CLIS}/claude\n`, {
      FAKE_AGENT_MODE: 'rate_limit',
    });
    const error = await limited.client.call('claude', { tag: 't', prompt: 'x' }, signal).catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('rate_limit');
    expect(limited.invocations().length).toBeGreaterThanOrEqual(2);
    const failing = setup('gemini', `    kind: command\n    preset: gemini\n    executable: ${CLIS}/gemini\n`, {
      FAKE_AGENT_MODE: 'error',
    });
    const failure = await failing.client.call('gemini', { tag: 't', prompt: 'x' }, signal).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(BackendError);
    expect((failure as BackendError).message).toContain('gemini reported');
  });

  it('CommandBackend - a hung CLI is killed at the timeout', async () => {
    const { client } = setup('codex', `    kind: command\n    preset: codex\n    executable: ${CLIS}/codex\n    timeout_s: 0.3\n`, {
      FAKE_AGENT_DELAY_MS: '30000',
    });
    const started = performance.now();
    const error = await client.call('codex', { tag: 't', prompt: 'x' }, signal).catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('CommandBackend - a missing executable is a config error that names the fix', async () => {
    const { client } = setup('claude', '    kind: command\n    preset: claude\n    executable: /nonexistent/claude\n');
    const error = await client.call('claude', { tag: 't', prompt: 'x' }, signal).catch((e: unknown) => e);
    expect((error as BackendError).kind).toBe('config');
    expect((error as Error).message).toContain("set 'executable:' in the config");
  });
});
