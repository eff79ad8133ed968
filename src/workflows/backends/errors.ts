import { redactSecrets } from '../../security/known-secrets.ts';

export type BackendErrorKind =
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'network'
  | 'bad_response'
  | 'auth'
  | 'config'
  | 'process'
  | 'aborted'
  | 'other';

const RETRYABLE: ReadonlySet<BackendErrorKind> = new Set(['rate_limit', 'server', 'timeout', 'network', 'bad_response']);

/** A failed backend attempt; `retryable` decides whether the client tries again. */
export class BackendError extends Error {
  readonly kind: BackendErrorKind;
  readonly backend: string;
  /** Delay the server asked for (Retry-After), in ms. */
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;

  constructor(backend: string, kind: BackendErrorKind, message: string, extra: { status?: number; retryAfterMs?: number } = {}) {
    // Error texts carry server bodies and process output, which may echo credentials.
    super(redactSecrets(`backend '${backend}': ${message}`));
    this.name = 'BackendError';
    this.backend = backend;
    this.kind = kind;
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** Thrown before a call when the run's budget is already spent. */
export class BudgetExceededError extends Error {
  readonly spentUsd: number;
  readonly limitUsd: number;
  /** `task`: the budget_usd param; `run`: the whole run's limit (`refinery run --budget-usd`). */
  readonly scope: 'task' | 'run';

  constructor(spentUsd: number, limitUsd: number, scope: 'task' | 'run' = 'task') {
    const what = scope === 'run' ? 'run budget exhausted (--budget-usd)' : 'budget exhausted';
    super(`${what}: $${spentUsd.toFixed(4)} spent of $${limitUsd.toFixed(4)}; no new model calls are made`);
    this.name = 'BudgetExceededError';
    this.spentUsd = spentUsd;
    this.limitUsd = limitUsd;
    this.scope = scope;
  }
}

/** A configuration problem, located in the config file. */
export class BackendConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackendConfigError';
  }
}
