// `.refinery/ui/<pid>.json`: the URL (with its token) of each dashboard running for the project,
// readable by its owner only, so `refinery ui list` can print it again (over SSH, in another
// terminal). Removed when the dashboard stops; a file whose process is gone is ignored.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { pidExists } from '../engine/state/process-identity.ts';

export interface ServerEntry {
  url: string;
  pid: number;
  mode: 'standalone' | 'watch';
  startedAt: string;
}

function dir(root: string): string {
  return path.join(root, '.refinery', 'ui');
}

/** Writes the entry; undefined when it cannot (a read-only project): the dashboard runs anyway. */
export function recordServer(root: string, entry: ServerEntry): string | undefined {
  const file = path.join(dir(root), `${entry.pid}.json`);
  try {
    mkdirSync(dir(root), { recursive: true, mode: 0o700 });
    const staging = `${file}.${process.pid}.tmp`;
    writeFileSync(staging, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
    renameSync(staging, file);
    return file;
  } catch {
    return undefined;
  }
}

export function forgetServer(file: string): void {
  rmSync(file, { force: true });
}

/** The dashboards running for this project. */
export function listServers(root: string): ServerEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir(root));
  } catch {
    return [];
  }
  const out: ServerEntry[] = [];
  for (const name of names.filter((n) => /^\d+\.json$/.test(n))) {
    try {
      const entry = JSON.parse(readFileSync(path.join(dir(root), name), 'utf8')) as ServerEntry;
      if (typeof entry.url === 'string' && Number.isInteger(entry.pid) && pidExists(entry.pid)) out.push(entry);
    } catch {
      /* a torn or foreign file: not a dashboard */
    }
  }
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}
