import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter, withRetry } from '../../../src/workflows/backends/retry.ts';
import { BackendError } from '../../../src/workflows/backends/errors.ts';

const policy = { max: 3, base_ms: 1, max_ms: 50, retry_429: true };
const signal = new AbortController().signal;

describe('retry', () => {
  it('parseRetryAfter - delta seconds and HTTP dates; junk is undefined', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('0.5')).toBe(500);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });

  it('backoffDelay - exponential with jitter, capped; Retry-After wins but is capped too', () => {
    const p = { max: 3, base_ms: 1000, max_ms: 60_000, retry_429: true };
    expect(backoffDelay(0, p, undefined, () => 0.5)).toBe(1000);
    expect(backoffDelay(2, p, undefined, () => 0.5)).toBe(4000);
    expect(backoffDelay(3, p, undefined, () => 1)).toBe(9600);
    expect(backoffDelay(10, p, undefined, () => 1)).toBe(60_000);
    expect(backoffDelay(0, p, 7000)).toBe(7000);
    expect(backoffDelay(0, p, 120_000)).toBe(60_000);
  });

  it('withRetry - retries retryable errors and reports each retry', async () => {
    const seen: string[] = [];
    let n = 0;
    const out = await withRetry(
      policy,
      signal,
      async () => {
        n++;
        if (n === 1) throw new BackendError('b', 'rate_limit', '429', { retryAfterMs: 1 });
        if (n === 2) throw new BackendError('b', 'server', '503');
        return 'ok';
      },
      (error, delay, attempt) => seen.push(`${attempt}:${error.kind}:${delay}`),
    );
    expect(out).toEqual({ value: 'ok', attempts: 3 });
    expect(seen[0]).toBe('1:rate_limit:1');
    expect(seen[1]).toMatch(/^2:server:\d+$/);
  });

  it('withRetry - gives up after max retries, and at once on non-retryable errors', async () => {
    let n = 0;
    await expect(
      withRetry(policy, signal, async () => {
        n++;
        throw new BackendError('b', 'timeout', 'slow');
      }),
    ).rejects.toThrow(/slow/);
    expect(n).toBe(4);
    n = 0;
    await expect(
      withRetry(policy, signal, async () => {
        n++;
        throw new BackendError('b', 'auth', 'no key');
      }),
    ).rejects.toThrow(/no key/);
    expect(n).toBe(1);
  });

  it('withRetry - retry_429 false fails fast on rate limits', async () => {
    let n = 0;
    await expect(
      withRetry({ ...policy, retry_429: false }, signal, async () => {
        n++;
        throw new BackendError('b', 'rate_limit', '429');
      }),
    ).rejects.toThrow(/429/);
    expect(n).toBe(1);
  });
});
