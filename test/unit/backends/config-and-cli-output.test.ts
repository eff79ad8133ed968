import { describe, expect, it } from 'vitest';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { BackendConfigError, BackendError } from '../../../src/workflows/backends/errors.ts';
import { parseCliOutput } from '../../../src/workflows/backends/cli-output.ts';
import { PRESETS, expandTemplate } from '../../../src/workflows/backends/presets.ts';

describe('parseBackendsConfig', () => {
  it('parseBackendsConfig - fills defaults and ignores other top-level keys', () => {
    const config = parseBackendsConfig(
      'pools: {llm: 4}\nbackends:\n  claude: {kind: command, preset: claude, model: sonnet}\n  local: {kind: openai, base_url: "http://127.0.0.1:11434/v1", model: qwen}\n',
      'refinery.config.yaml',
    );
    expect(config.backends.claude).toMatchObject({ kind: 'command', preset: 'claude', timeout_s: 600, retry: { max: 3, base_ms: 1000 } });
    expect(config.backends.local).toMatchObject({ kind: 'openai', json_schema: true, stream: false });
  });

  it('parseBackendsConfig - a secret in the file is refused with the fix', () => {
    expect(() =>
      parseBackendsConfig('backends:\n  o: {kind: openai, base_url: "http://x/v1", model: m, api_key: sk-123}\n', 'r.yaml'),
    ).toThrowError(/r\.yaml: backends\.o\.api_key: secrets are never read from the config file; .*api_key_env/);
  });

  it('parseBackendsConfig - schema errors carry file:line:col and the path', () => {
    const text = 'backends:\n  local:\n    kind: openai\n    model: m\n    base_url: not-a-url\n';
    expect(() => parseBackendsConfig(text, 'refinery.config.yaml')).toThrowError(BackendConfigError);
    expect(() => parseBackendsConfig(text, 'refinery.config.yaml')).toThrowError(/refinery\.config\.yaml:5:15 backends\.local\.base_url: /);
    expect(() => parseBackendsConfig('backends:\n  x: {kind: carrier-pigeon}\n', 'c.yaml')).toThrowError(/c\.yaml:2:\d+ backends\.x\.kind/);
  });
});

describe('presets', () => {
  it('presets - print mode arguments, prompt never in argv', () => {
    expect(PRESETS.claude.args('sonnet')).toEqual(['-p', '--output-format', 'json', '--model', 'sonnet']);
    expect(PRESETS.codex.args(undefined)).toEqual(['exec', '--json', '--skip-git-repo-check', '-']);
    expect(PRESETS.gemini.args('gemini-pro')).toEqual([
      '--output-format',
      'json',
      '-m',
      'gemini-pro',
      '-p',
      'Follow the instructions given above.',
    ]);
    expect(expandTemplate(['run', '--model={model}', '{prompt_file}'], { model: 'm', promptFile: '/tmp/p.md' })).toEqual([
      'run',
      '--model=m',
      '/tmp/p.md',
    ]);
  });
});

describe('parseCliOutput', () => {
  it('parseCliOutput - claude: result, total_cost_usd and all input tokens', () => {
    const stdout = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'hello',
      total_cost_usd: 0.0389,
      usage: { input_tokens: 9, cache_creation_input_tokens: 18078, cache_read_input_tokens: 22363, output_tokens: 90 },
      modelUsage: { 'claude-haiku': {} },
    });
    expect(parseCliOutput('claude-json', 'c', 'haiku', stdout)).toEqual({
      text: 'hello',
      model: 'claude-haiku',
      inputTokens: 40450,
      outputTokens: 90,
      costUsd: 0.0389,
    });
  });

  it('parseCliOutput - claude: is_error with a rate limit is a retryable rate_limit error', () => {
    const stdout = JSON.stringify({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      result: 'API Error: 429 rate_limit_error',
    });
    try {
      parseCliOutput('claude-json', 'c', 'm', stdout);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BackendError);
      expect((error as BackendError).kind).toBe('rate_limit');
      expect((error as BackendError).retryable).toBe(true);
    }
  });

  it('parseCliOutput - codex: last agent_message, usage summed over turns, no cost', () => {
    const lines = [
      { type: 'thread.started', thread_id: 't' },
      { type: 'item.completed', item: { type: 'agent_message', text: 'first' } },
      { type: 'item.completed', item: { type: 'agent_message', text: 'final' } },
      { type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 90, output_tokens: 7 } },
    ].map((l) => JSON.stringify(l));
    expect(parseCliOutput('codex-jsonl', 'x', 'gpt', `warning: noise\n${lines.join('\n')}\n`)).toEqual({
      text: 'final',
      model: 'gpt',
      inputTokens: 100,
      outputTokens: 7,
    });
    expect(() => parseCliOutput('codex-jsonl', 'x', 'gpt', JSON.stringify({ type: 'turn.failed', error: { message: 'boom' } }))).toThrow(
      /codex reported boom/,
    );
  });

  it('parseCliOutput - gemini: response and per-model token stats; error object is an error', () => {
    const stdout = JSON.stringify({
      response: 'hi',
      stats: { models: { 'gemini-pro': { tokens: { prompt: 50, candidates: 5, thoughts: 3 } } } },
    });
    expect(parseCliOutput('gemini-json', 'g', 'm', stdout)).toEqual({ text: 'hi', model: 'gemini-pro', inputTokens: 50, outputTokens: 8 });
    expect(() => parseCliOutput('gemini-json', 'g', 'm', JSON.stringify({ error: { message: 'auth failed' } }))).toThrow(/gemini reported/);
    expect(() => parseCliOutput('gemini-json', 'g', 'm', 'not json')).toThrow(/printed no JSON/);
  });
});
