import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';

/**
 * Programs refinery starts itself (agent CLIs as model backends, command agents of delegated
 * jobs) start here: from an argument array, never through a shell, as the leader of their own
 * process group, so that stopping one stops everything it started. zx's `$` (tasks' `ctx.$`)
 * always goes through a shell and kills the tree it finds at that moment; these programs need
 * neither the shell nor the race, and some write to a file instead of a pipe.
 */
export interface GroupSpec {
  executable: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** stdout and stderr: pipes (default) or an open file descriptor for both. */
  outputFd?: number;
}

export interface GroupProcess {
  child: ChildProcess;
  /** Resolves when the process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`; resolves once the leader exited. */
  stop(graceMs: number): Promise<void>;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Starts a program in its own process group; rejects with the spawn error (ENOENT: not found). */
export async function startInGroup(spec: GroupSpec): Promise<GroupProcess> {
  const stdio: StdioOptions = spec.outputFd === undefined ? ['pipe', 'pipe', 'pipe'] : ['pipe', spec.outputFd, spec.outputFd];
  const child = spawn(spec.executable, [...spec.args], { cwd: spec.cwd, env: spec.env, stdio, detached: true });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
  child.stdin?.on('error', () => undefined);
  let running = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      running = false;
      resolve({ code, signal });
    });
  });
  return {
    child,
    exited,
    stop: async (graceMs) => {
      if (!running) return;
      killGroup(child.pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child.pid, 'SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
