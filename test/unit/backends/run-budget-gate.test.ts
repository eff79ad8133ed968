import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseBackendsConfig } from '../../../src/workflows/backends/config-file.ts';
import { BudgetExceededError } from '../../../src/workflows/backends/errors.ts';
import { LlmClient, type LlmCallRecord } from '../../../src/workflows/backends/llm-client.ts';
import { createRunBudget } from '../../../src/engine/executor/budget.ts';

const root = mkdtempSync(path.join(tmpdir(), 'refinery-gate-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
mkdirSync(path.join(root, 'rec'));
writeFileSync(path.join(root, 'rec', 'ask.json'), JSON.stringify({ text: 'ok', input_tokens: 1000, output_tokens: 0, cost_usd: 0.004 }));
const config = parseBackendsConfig('backends:\n  r: { kind: replay, dir: rec }\n');
const signal = new AbortController().signal;

describe('LlmClient and the run budget', () => {
  it('LlmClient - once the run budget (ctx.budget) is spent, uncached calls stop with a run-budget reason; cached answers still flow at $0', async () => {
    const run = createRunBudget(0.005);
    const records: LlmCallRecord[] = [];
    // The engine charges every reported call to the run budget; this stands in for ctx.report.
    const client = new LlmClient({
      config,
      root,
      cacheDir: path.join(root, 'cache'),
      gate: run,
      onCall: (r) => (records.push(r), run.charge(r.costUsd)),
    });
    await client.call('r', { tag: 'ask', prompt: 'one' }, signal);
    expect(client.budgetExhausted).toBe(false);
    await client.call('r', { tag: 'ask', prompt: 'two' }, signal);
    expect(run.spentUsd()).toBeCloseTo(0.008);
    expect(client.budgetExhausted).toBe(true);
    const error = await client.call('r', { tag: 'ask', prompt: 'three' }, signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect((error as BudgetExceededError).scope).toBe('run');
    expect((error as Error).message).toMatch(/run budget exhausted \(--budget-usd\): \$0\.0080 spent of \$0\.0050/);
    const again = await client.call('r', { tag: 'ask', prompt: 'one' }, signal);
    expect(again).toMatchObject({ cached: true, costUsd: 0 });
    expect(records.map((r) => [r.cached, r.costUsd, r.originalCostUsd])).toEqual([
      [false, 0.004, 0.004],
      [false, 0.004, 0.004],
      [true, 0, 0.004],
    ]);
  });

  it('LlmClient - a run without a limit never closes the gate', async () => {
    const run = createRunBudget(undefined);
    const client = new LlmClient({ config, root, gate: run, onCall: (r) => run.charge(r.costUsd) });
    for (const prompt of ['a', 'b', 'c']) await client.call('r', { tag: 'ask', prompt }, signal);
    expect(run.spentUsd()).toBeCloseTo(0.012);
    expect(client.budgetExhausted).toBe(false);
  });
});
