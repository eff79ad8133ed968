// zx enters the project here and nowhere else.
import { spawn as spawnChild, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Shell as ZxShell, LogEntry } from 'zx';

export type Shell = ZxShell;

export interface ShellOptions {
  cwd: string;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Each line a command prints, as it prints it. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface BoundShell {
  $: Shell;
  /** A task's error, described as a command failure (the command, its exit code, its last stderr lines) when it is one. */
  describeFailure(error: unknown): string | undefined;
}

// zx loads on the first `$` a task asks for: most tasks never do, and loading it costs more
// than thousands of small stages. Its ES module wraps this same CommonJS build, so tasks that
// import zx themselves share its state.
const require = createRequire(import.meta.url);
let zx: typeof import('zx/core') | undefined;

const KILL_GRACE_MS = 2_000;

/**
 * Kills every process group a shell started when the stage is aborted (Ctrl-C, its timeout).
 * zx kills the process tree it finds at that moment; a grandchild whose parent died first is no
 * longer in that tree, but it is still in the group (zx starts commands detached: their own group).
 */
function groupKiller(signal: AbortSignal): (command: string, args: readonly string[], options: object) => ChildProcess {
  const live = new Set<ChildProcess>();
  const killAll = (sig: NodeJS.Signals): void => {
    for (const child of live) {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* the group is gone */
      }
    }
  };
  signal.addEventListener(
    'abort',
    () => {
      killAll('SIGTERM');
      if (live.size > 0) setTimeout(() => killAll('SIGKILL'), KILL_GRACE_MS).unref();
    },
    { once: true },
  );
  return (command, args, options) => {
    const child = spawnChild(command, args as string[], options);
    live.add(child);
    child.once('exit', () => live.delete(child));
    return child;
  };
}

/** Splits a stream's chunks into lines for `onLine` (a last line without newline comes at the end). */
function lineSplitter(onLine: ShellOptions['onLine']): (entry: LogEntry) => void {
  const partial = new Map<string, string>();
  const emit = (key: string, stream: 'stdout' | 'stderr', text: string, flush: boolean): void => {
    const lines = ((partial.get(key) ?? '') + text).split('\n');
    const rest = flush ? '' : (lines.pop() ?? '');
    partial.set(key, rest);
    for (const line of lines) if (line !== '' || !flush) onLine?.(stream, line.replace(/\r$/, ''));
  };
  return (entry) => {
    if (entry.kind === 'stdout' || entry.kind === 'stderr') emit(`${entry.id}:${entry.kind}`, entry.kind, entry.data.toString(), false);
    else if (entry.kind === 'end') {
      for (const stream of ['stdout', 'stderr'] as const)
        if (partial.get(`${entry.id}:${stream}`)) emit(`${entry.id}:${stream}`, stream, '', true);
    }
  };
}

/** A zx `$` whose commands run in `cwd`, are aborted by `signal` and never echo to the console. */
export function boundShell(options: ShellOptions): BoundShell {
  zx ??= require('zx/core') as typeof import('zx/core');
  const commands = new Map<string, string>();
  let lastFailure: { cmd: string; exitCode: number | null; signal: string | null } | undefined;
  const lines = lineSplitter(options.onLine);
  const $ = zx.$({
    cwd: options.cwd,
    signal: options.signal,
    env: options.env ?? process.env,
    verbose: false,
    quiet: true,
    detached: true,
    spawn: groupKiller(options.signal) as never,
    log: (entry: LogEntry) => {
      if (entry.kind === 'cmd') commands.set(entry.id, entry.cmd);
      lines(entry);
      if (entry.kind === 'end') {
        if (entry.exitCode !== 0) lastFailure = { cmd: commands.get(entry.id) ?? '', exitCode: entry.exitCode, signal: entry.signal };
        commands.delete(entry.id);
      }
    },
  });
  const ProcessOutput = zx.ProcessOutput;
  return {
    $,
    describeFailure(error) {
      if (!(error instanceof ProcessOutput) || !lastFailure) return undefined;
      const how = lastFailure.exitCode !== null ? `exit code ${lastFailure.exitCode}` : `signal ${lastFailure.signal}`;
      const tail = (error.stderr || error.stdout).trim().split('\n').slice(-3).join(' | ');
      return `command failed with ${how}: ${lastFailure.cmd}${tail ? `: ${tail}` : ''}`;
    },
  };
}
