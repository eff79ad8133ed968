import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pidExists } from './process-identity.ts';

let serial = 0;

/** `<file>.<pid>.<n>.tmp`: the pid says whose it is, so a later run can tell a dead run's leftovers. */
function tempPathFor(file: string): string {
  serial += 1;
  return `${file}.${process.pid}.${serial.toString(36)}.tmp`;
}

/**
 * Writes a whole file through a temporary one in the same folder and a rename, so readers see
 * the old content or the new, never half. The temporary file never outlives a failure (a full
 * disk, say): the error is thrown after it is removed.
 */
export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: { sync?: boolean } = {}): void {
  const temp = tempPathFor(file);
  try {
    const fd = openSync(temp, 'wx', 0o644);
    try {
      writeFileSync(fd, data);
      if (options.sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * The same write, asynchronously and always synced: for records other processes read while this
 * one runs (the jobs registry), where a crash must leave the old content or the new on disk.
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o644): Promise<void> {
  const temp = tempPathFor(file);
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      await handle.writeFile(content, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export async function writeJsonAtomic(file: string, value: unknown, mode = 0o644): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`, mode);
}

const TEMP_NAME = /\.(\d+)(?:\.[0-9a-z]+)*\.tmp$/;
/** A temporary file is written in milliseconds; one this old belongs to nobody, whatever its pid says now. */
const ABANDONED_MS = 10 * 60_000;

/**
 * Removes `*.<pid>[.x].tmp` files left in these folders by processes that died before they
 * could clean up (killed, or crashed by an older refinery). Files of live processes stay.
 */
export function removeStaleTemps(dirs: readonly string[], now = Date.now()): void {
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const match = TEMP_NAME.exec(name);
      if (!match) continue;
      const file = path.join(dir, name);
      const pid = Number(match[1]);
      try {
        if (pid !== process.pid && (!pidExists(pid) || now - statSync(file).mtimeMs > ABANDONED_MS)) rmSync(file, { force: true });
      } catch {
        /* gone meanwhile */
      }
    }
  }
}
