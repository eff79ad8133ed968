import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { LlmResult } from './types.ts';
import { writeFileAtomicSync } from '../../engine/state/atomic-file.ts';
import { setAside } from '../../engine/state/set-aside.ts';
import { describeWriteProblem, writeProblem } from '../../engine/state/write-problem.ts';

export interface CachedEntry {
  key: string;
  backend: string;
  result: LlmResult;
  costUsd: number;
  latencyMs: number;
  savedAt: string;
}

/** Whether `value` is a cached response for `key` (the local cache's entries, and the remote cache's). */
export function isCachedEntry(value: unknown, key: string): value is CachedEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Partial<CachedEntry>;
  return (
    entry.key === key &&
    typeof entry.backend === 'string' &&
    typeof entry.result === 'object' &&
    entry.result !== null &&
    typeof entry.result.text === 'string' &&
    typeof entry.costUsd === 'number'
  );
}

/**
 * Responses on disk, one JSON file per key under `<dir>/<k0k1>/<key>.json`, written atomically.
 * An entry that cannot be read back is set aside (`<key>.json.corrupt-<time>`, reported through
 * `warn`) and the call is made again.
 */
export class ResponseCache {
  constructor(
    readonly dir: string,
    private readonly report: { warn?: (message: string) => void; root?: string } = {},
  ) {}

  private file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`invalid cache key '${key}'`);
    return path.join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  get(key: string): CachedEntry | undefined {
    const file = this.file(key);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    if (isCachedEntry(value, key)) return value;
    this.report.warn?.(setAside(this.report.root ?? this.dir, file, 'is not a cached model response', 'the call is made again'));
    return undefined;
  }

  /** Empty replies are never cached. A reply that cannot be saved (a full disk) is still the caller's: only a warning. */
  put(entry: CachedEntry): void {
    if (entry.result.text.trim() === '') return;
    const file = this.file(entry.key);
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileAtomicSync(file, `${JSON.stringify(entry, null, 2)}\n`);
    } catch (error) {
      this.report.warn?.(
        `${describeWriteProblem(writeProblem(file, error), this.report.root ?? this.dir)}; the response is used but not cached`,
      );
    }
  }
}
