import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cacheKey, canonicalJson } from '../../../src/workflows/backends/cache-key.ts';
import { ResponseCache } from '../../../src/workflows/backends/response-cache.ts';
import { Budget, budgetForRun } from '../../../src/workflows/backends/budget.ts';
import { BudgetExceededError } from '../../../src/workflows/backends/errors.ts';
import { costOf } from '../../../src/workflows/backends/pricing.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'refinery-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('cache', () => {
  it('canonicalJson - key order never changes the text; undefined keys vanish', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe('{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
  });

  it('cacheKey - changes with backend, model, prompt and options; stable otherwise', () => {
    const base = { backend: 'j', kind: 'openai', model: 'm', identity: { base_url: 'u' }, prompt: 'p', temperature: 0 };
    const key = cacheKey(base);
    expect(cacheKey({ ...base, identity: { base_url: 'u' } })).toBe(key);
    for (const change of [
      { backend: 'k' },
      { model: 'n' },
      { prompt: 'q' },
      { temperature: 1 },
      { identity: { base_url: 'v' } },
      { jsonSchema: {} },
    ])
      expect(cacheKey({ ...base, ...change })).not.toBe(key);
  });

  it('ResponseCache - round trip; empty replies are not stored; bad keys are refused', () => {
    const cache = new ResponseCache(dir);
    const key = cacheKey({ backend: 'j', kind: 'replay', model: 'm', identity: {}, prompt: 'p' });
    const entry = {
      key,
      backend: 'j',
      result: { text: 'hi', model: 'm', inputTokens: 1, outputTokens: 2 },
      costUsd: 0.1,
      latencyMs: 5,
      savedAt: 'now',
    };
    expect(cache.get(key)).toBeUndefined();
    cache.put(entry);
    expect(cache.get(key)).toEqual(entry);
    const empty = cacheKey({ backend: 'j', kind: 'replay', model: 'm', identity: {}, prompt: 'empty' });
    cache.put({ ...entry, key: empty, result: { ...entry.result, text: '  ' } });
    expect(cache.get(empty)).toBeUndefined();
    expect(() => cache.put({ ...entry, key: '../../etc/passwd' })).toThrow(/invalid cache key/);
  });
});

describe('budget and pricing', () => {
  it('Budget - allows calls until spent, then throws BudgetExceededError', () => {
    const budget = new Budget(0.05);
    budget.assertAvailable();
    budget.charge(0.03);
    budget.assertAvailable();
    budget.charge(0.03);
    expect(budget.exhausted).toBe(true);
    expect(() => budget.assertAvailable()).toThrow(BudgetExceededError);
    expect(() => new Budget(-1)).toThrow(RangeError);
  });

  it('budgetForRun - one budget per run id', () => {
    const a = budgetForRun('run-x', 1);
    expect(budgetForRun('run-x', 5)).toBe(a);
    expect(budgetForRun('run-y', 1)).not.toBe(a);
  });

  it('costOf - reported cost wins; else tokens priced per million; no price is free', () => {
    const result = { text: '', model: 'm', inputTokens: 2_000_000, outputTokens: 1_000_000 };
    expect(costOf({ ...result, costUsd: 0.5 }, { input_per_mtok: 1, output_per_mtok: 1 })).toBe(0.5);
    expect(costOf(result, { input_per_mtok: 0.5, output_per_mtok: 2 })).toBe(3);
    expect(costOf(result, undefined)).toBe(0);
  });
});
