import type { CommandIo } from './command.ts';
import type { LockResult } from '../engine/state/project-lock.ts';
import type { StateWarn } from '../engine/state/set-aside.ts';
import { fullDiskProblem, summarizeWriteProblems, type WriteProblem } from '../engine/state/write-problem.ts';

/** State files set aside (damaged, unreadable) are reported as warnings; the command goes on. */
export function stateWarn(io: CommandIo): StateWarn {
  return (message) => io.stderr.write(`refinery: warning: ${message}\n`);
}

/**
 * Prints the files that could not be written, one line per cause (a full disk hits many files
 * at once). When the run failed with nothing reported and the disk is full, says so: a command
 * that ran out of space may have had nowhere to write its own error. Returns whether it printed.
 */
export function reportWriteProblems(io: CommandIo, problems: ReadonlyArray<WriteProblem | undefined>, failed = false): boolean {
  const found = problems.filter((p): p is WriteProblem => p !== undefined);
  if (failed && !found.some((p) => p.code === 'ENOSPC')) {
    const full = fullDiskProblem(io.cwd);
    if (full) found.push(full);
  }
  for (const line of summarizeWriteProblems(found, io.cwd)) io.stderr.write(`refinery: error: ${line}\n`);
  return found.length > 0;
}

/** Why the project lock was not taken, in one line. */
export function reportLockRefusal(io: CommandIo, lock: Exclude<LockResult, { ok: true }>): void {
  if (lock.problem) {
    reportWriteProblems(io, [lock.problem]);
    return;
  }
  const who = lock.holder ? `pid ${lock.holder.pid}${lock.holder.host ? ` on ${lock.holder.host}` : ''}` : 'another process';
  io.stderr.write(
    `refinery: another refinery process (${who}) is running in ${io.cwd} (it holds .refinery/lock); wait for it or stop it\n`,
  );
}
