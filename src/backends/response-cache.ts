import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LlmResult } from './types.ts';

export interface CachedEntry {
  key: string;
  backend: string;
  result: LlmResult;
  costUsd: number;
  latencyMs: number;
  savedAt: string;
}

/** Responses on disk, one JSON file per key under `<dir>/<k0k1>/<key>.json`, written atomically. */
export class ResponseCache {
  constructor(readonly dir: string) {}

  private file(key: string): string {
    if (!/^[0-9a-f]{64}$/.test(key)) throw new Error(`invalid cache key '${key}'`);
    return path.join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  get(key: string): CachedEntry | undefined {
    try {
      const entry = JSON.parse(readFileSync(this.file(key), 'utf8')) as CachedEntry;
      return entry.key === key && typeof entry.result?.text === 'string' ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  /** Empty replies are never cached. */
  put(entry: CachedEntry): void {
    if (entry.result.text.trim() === '') return;
    const file = this.file(entry.key);
    mkdirSync(path.dirname(file), { recursive: true });
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    writeFileSync(temp, `${JSON.stringify(entry, null, 2)}\n`);
    renameSync(temp, file);
  }
}
