/** A counting semaphore: at most `limit` holders at once, FIFO for waiters. */
export class Semaphore {
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.active;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        resolve();
      };
      const onAbort = (): void => {
        const index = this.waiters.indexOf(grant);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal?.reason);
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(grant);
    });
  }

  private release(): void {
    this.active--;
    this.waiters.shift()?.();
  }
}

const pools = new Map<string, Semaphore>();

/** One pool per backend name and limit, shared by every task in this process. */
export function poolFor(backend: string, limit: number): Semaphore {
  const key = `${backend}\u0000${limit}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new Semaphore(limit);
    pools.set(key, pool);
  }
  return pool;
}
