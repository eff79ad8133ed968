import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { LlmClient, type LlmCallRecord } from '../../../src/workflows/backends/llm-client.ts';
import { Budget } from '../../../src/workflows/backends/budget.ts';
import { BudgetExceededError, BackendConfigError } from '../../../src/workflows/backends/errors.ts';

let server: FakeOpenAiServer;
const dir = mkdtempSync(path.join(tmpdir(), 'refinery-client-'));
beforeAll(async () => {
  server = await startFakeOpenAiServer((req) => ({
    kind: 'content',
    content: `re: ${req.prompt}`,
    delayMs: 100,
    promptTokens: 1000,
    completionTokens: 1000,
  }));
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const yaml = (url: string) => `backends:
  narrow: {kind: openai, base_url: "${url}", model: m1, concurrency: 1, price: {input_per_mtok: 10, output_per_mtok: 10}}
  wide: {kind: openai, base_url: "${url}", model: m2, concurrency: 4}
`;
const signal = new AbortController().signal;

function client(cacheDir?: string, budget?: Budget, calls: LlmCallRecord[] = []) {
  return new LlmClient({
    config: parseBackendsConfig(yaml(server.url), 'c.yaml'),
    root: dir,
    cacheDir,
    budget,
    onCall: (c) => calls.push(c),
  });
}

describe('LlmClient', () => {
  it('LlmClient - an unchanged call is answered from the cache: no request, $0, cached record', async () => {
    const cacheDir = path.join(dir, 'cache-1');
    const first: LlmCallRecord[] = [];
    await client(cacheDir, undefined, first).call('narrow', { tag: 'a', prompt: 'same' }, signal);
    const before = server.requests.length;
    const second: LlmCallRecord[] = [];
    const out = await client(cacheDir, undefined, second).call('narrow', { tag: 'a', prompt: 'same' }, signal);
    expect(server.requests.length).toBe(before);
    expect(out).toMatchObject({ text: 're: same', cached: true, costUsd: 0 });
    expect(first[0]).toMatchObject({ cached: false, costUsd: 0.02 });
    expect(second).toEqual([expect.objectContaining({ cached: true, costUsd: 0, latencyMs: 0 })]);
    await client(cacheDir).call('narrow', { tag: 'a', prompt: 'changed' }, signal);
    expect(server.requests.length).toBe(before + 1);
  });

  it('LlmClient - the budget stops new calls once spent; cached answers still flow', async () => {
    const cacheDir = path.join(dir, 'cache-2');
    const budget = new Budget(0.03);
    const c = client(cacheDir, budget);
    await c.call('narrow', { tag: 'a', prompt: 'b1' }, signal);
    await c.call('narrow', { tag: 'a', prompt: 'b2' }, signal);
    expect(budget.spentUsd).toBeCloseTo(0.04);
    const before = server.requests.length;
    await expect(c.call('narrow', { tag: 'a', prompt: 'b3' }, signal)).rejects.toBeInstanceOf(BudgetExceededError);
    expect(server.requests.length).toBe(before);
    await expect(c.call('narrow', { tag: 'a', prompt: 'b1' }, signal)).resolves.toMatchObject({ cached: true });
  });

  it('LlmClient - each backend has its own concurrency pool', async () => {
    const c = client();
    const t0 = performance.now();
    await Promise.all([0, 1, 2].map((i) => c.call('narrow', { tag: 'p', prompt: `n${i}` }, signal)));
    const serial = performance.now() - t0;
    const t1 = performance.now();
    await Promise.all([0, 1, 2].map((i) => c.call('wide', { tag: 'p', prompt: `w${i}` }, signal)));
    const parallel = performance.now() - t1;
    expect(serial).toBeGreaterThanOrEqual(290);
    expect(parallel).toBeLessThan(serial * 0.7);
  });

  it('LlmClient - an unknown backend name lists the configured ones', async () => {
    await expect(client().call('nope', { tag: 't', prompt: 'x' }, signal)).rejects.toThrowError(BackendConfigError);
    await expect(client().call('nope', { tag: 't', prompt: 'x' }, signal)).rejects.toThrow(
      "c.yaml: no backend named 'nope'; configured: narrow, wide",
    );
  });
});
