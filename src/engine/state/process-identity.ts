import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Who a process is, beyond its pid: pids are reused (after a reboot, in a container where
 * every first process is pid 1), so a pid alone cannot say whether the process that wrote a
 * lock is still the one running. On Linux the start time (field 22 of /proc/<pid>/stat, in
 * clock ticks since boot) and the boot id pin it down; elsewhere they are absent and only
 * the pid is checked.
 */
export interface ProcessIdentity {
  pid: number;
  /** Start time in clock ticks since boot; absent without /proc. */
  start?: string;
  /** /proc/sys/kernel/random/boot_id; absent without /proc. */
  boot?: string;
  /** For messages only: the lock is for processes of one machine. */
  host: string;
}

/** Field 22 of /proc/<pid>/stat, or undefined when there is no such process or no /proc. */
export function processStart(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 is the command name in parentheses and may hold spaces or parentheses itself.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = rest[19];
    return start && /^\d+$/.test(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

let boot: string | undefined | null = null;

function bootId(): string | undefined {
  if (boot === null) {
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
    } catch {
      boot = undefined;
    }
  }
  return boot;
}

export function selfIdentity(): ProcessIdentity {
  const start = processStart('self');
  const id = bootId();
  return { pid: process.pid, ...(start ? { start } : {}), ...(id ? { boot: id } : {}), host: os.hostname() };
}

/** kill(pid, 0): false only when there is no such process (EPERM means it exists). */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process described is still running: the machine has not rebooted since, the
 * pid exists, and (where /proc tells) the process with that pid started when it did.
 */
export function isRunning(who: ProcessIdentity): boolean {
  const id = bootId();
  if (who.boot && id && who.boot !== id) return false;
  if (!Number.isInteger(who.pid) || who.pid <= 0 || !pidExists(who.pid)) return false;
  if (who.start) {
    const now = processStart(who.pid);
    if (now !== undefined && now !== who.start) return false;
  }
  return true;
}
