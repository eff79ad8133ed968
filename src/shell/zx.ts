// zx enters the project here and nowhere else.
import { $ as zx$, type Shell as ZxShell } from 'zx';

export type Shell = ZxShell;

export interface ShellOptions {
  cwd: string;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/** A zx `$` whose commands run in `cwd`, are aborted by `signal` and never echo to the console. */
export function boundShell(options: ShellOptions): Shell {
  return zx$({
    cwd: options.cwd,
    signal: options.signal,
    env: options.env ?? process.env,
    verbose: false,
    quiet: true,
    detached: true,
  });
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  /** The last lines of stderr (and stdout when stderr is empty), for failure messages. */
  tail: string;
  aborted: boolean;
}

export interface CommandSpec {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Literal shell text around the values; zx quotes every value. */
  pieces: readonly string[];
  values: readonly unknown[];
  signal: AbortSignal;
  /** The shell that runs the script; /bin/sh as in make unless a stage says otherwise. */
  shell?: string;
  /** Grace period between SIGTERM and SIGKILL to the process group. */
  killAfterMs?: number;
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

/** POSIX single-quoting, which every sh understands (zx's default `$'...'` is bash-only). */
export function quotePosix(value: string): string {
  if (value === '') return "''";
  if (/^[A-Za-z0-9_\/.,:@%+=-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", "'\\''")}'`;
}

function lineSplitter(emit: (line: string) => void): (chunk: Buffer) => void {
  let rest = '';
  return (chunk) => {
    const text = rest + chunk.toString('utf8');
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) emit(l);
  };
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

function tailOf(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/**
 * Runs a shell command through zx with every interpolated value quoted, in its own process
 * group, so an abort (timeout or Ctrl-C) kills the whole group: SIGTERM, then SIGKILL.
 */
export async function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
  const shell = zx$({
    cwd: spec.cwd,
    env: spec.env,
    shell: spec.shell ?? '/bin/sh',
    quote: quotePosix,
    prefix: '',
    postfix: '',
    verbose: false,
    quiet: true,
    nothrow: true,
    detached: true,
    halt: true,
  });
  const strings = Object.assign([...spec.pieces], { raw: [...spec.pieces] }) as unknown as TemplateStringsArray;
  const proc = shell(strings, ...spec.values);
  let aborted = false;
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = (): void => {
    aborted = true;
    const pid = proc.pid;
    if (pid === undefined) return;
    killGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), spec.killAfterMs ?? 2000);
    killTimer.unref();
  };
  proc.run();
  const child = proc.child;
  if (spec.onLine && child) {
    const onLine = spec.onLine;
    child.stdout?.on('data', lineSplitter((l) => onLine('stdout', l)));
    child.stderr?.on('data', lineSplitter((l) => onLine('stderr', l)));
  }
  if (spec.signal.aborted) onAbort();
  else spec.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const out = await proc;
    const stderr = out.stderr;
    return { exitCode: out.exitCode, signal: out.signal, tail: tailOf(stderr.trim() ? stderr : out.stdout), aborted };
  } finally {
    spec.signal.removeEventListener('abort', onAbort);
    if (killTimer) clearTimeout(killTimer);
  }
}
