// The stage journal (`.refinery/state/<pipeline>.jsonl`) read without touching it: the engine's
// reader sets a damaged file aside, which a dashboard must never do. Cached by size and mtime.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { isObject } from './jsonl.ts';

export interface JournalEntry {
  runId: string;
  finishedAt: string;
  durationMs: number;
}

interface Cached {
  size: number;
  mtimeMs: number;
  records: Map<string, JournalEntry>;
}

export class JournalReader {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly root: string) {}

  records(pipeline: string): Map<string, JournalEntry> {
    const file = path.join(this.root, '.refinery', 'state', `${pipeline}.jsonl`);
    let info;
    try {
      info = statSync(file);
    } catch {
      return new Map();
    }
    const cached = this.cache.get(pipeline);
    if (cached && cached.size === info.size && cached.mtimeMs === info.mtimeMs) return cached.records;
    const records = new Map<string, JournalEntry>();
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return records;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      let entry: unknown;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (!isObject(entry) || typeof entry.s !== 'string') continue;
      if (entry.f === null) records.delete(entry.s);
      else if (isObject(entry.r) && typeof entry.r.runId === 'string' && typeof entry.r.finishedAt === 'string') {
        records.set(entry.s, {
          runId: entry.r.runId,
          finishedAt: entry.r.finishedAt,
          durationMs: typeof entry.r.durationMs === 'number' ? entry.r.durationMs : 0,
        });
      }
    }
    this.cache.set(pipeline, { size: info.size, mtimeMs: info.mtimeMs, records });
    return records;
  }
}
