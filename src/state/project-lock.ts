import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** True while a process with this id exists (one owned by another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type LockResult = { ok: true; release: () => void } | { ok: false; holder: number };

/** One refinery run or watch per project at a time; a lock left by a killed process is taken over. */
export function acquireProjectLock(root: string): LockResult {
  const file = path.join(root, '.refinery', 'lock');
  mkdirSync(path.dirname(file), { recursive: true });
  for (let tries = 0; tries < 3; tries += 1) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return {
        ok: true,
        release: () => {
          try {
            if (readFileSync(file, 'utf8') === String(process.pid)) rmSync(file, { force: true });
          } catch {
            /* already gone */
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) return { ok: false, holder };
      rmSync(file, { force: true });
    }
  }
  return { ok: false, holder: -1 };
}
