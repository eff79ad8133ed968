import { BackendError } from './errors.ts';
import type { RetryConfig } from './config-schema.ts';

/** Parses a Retry-After header (delta seconds or an HTTP date) into ms; undefined when absent or invalid. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Exponential backoff with ±20 % jitter, capped; a server's Retry-After wins when given. */
export function backoffDelay(attempt: number, policy: RetryConfig, retryAfterMs?: number, random = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.max_ms);
  const base = Math.min(policy.base_ms * 2 ** attempt, policy.max_ms);
  const jitter = 1 + (random() * 0.4 - 0.2);
  return Math.round(Math.min(base * jitter, policy.max_ms));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export interface RetryOutcome<T> {
  value: T;
  attempts: number;
}

/** Runs `attempt` until it succeeds, fails with a non-retryable error or runs out of retries. */
export async function withRetry<T>(
  policy: RetryConfig,
  signal: AbortSignal,
  attempt: (n: number) => Promise<T>,
  onRetry?: (error: BackendError, delayMs: number, n: number) => void,
): Promise<RetryOutcome<T>> {
  for (let n = 0; ; n++) {
    try {
      return { value: await attempt(n), attempts: n + 1 };
    } catch (error) {
      if (!(error instanceof BackendError) || !error.retryable || signal.aborted) throw error;
      if (error.kind === 'rate_limit' && !policy.retry_429) throw error;
      if (n >= policy.max) throw error;
      const delay = backoffDelay(n, policy, error.retryAfterMs);
      onRetry?.(error, delay, n + 1);
      await sleep(delay, signal);
    }
  }
}
