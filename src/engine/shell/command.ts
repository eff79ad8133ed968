import { spawn } from 'node:child_process';

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  /** The last lines of stderr (or of stdout when stderr is empty), for failure messages. */
  tail: string;
  aborted: boolean;
  /** The job was dropped before its command started: the run stopped after a failure (runner-pool.ts). */
  notStarted?: boolean;
}

export interface CommandSpec {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Literal shell text around the values; every value is quoted. */
  pieces: readonly string[];
  values: readonly unknown[];
  signal: AbortSignal;
  /** The shell that runs the script; /bin/sh as in make. */
  shell?: string;
  /** Grace period between SIGTERM and SIGKILL to the process group. */
  killAfterMs?: number;
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

/** POSIX single-quoting, which every sh understands (zx's default `$'...'` is bash-only). */
export function quotePosix(value: string): string {
  if (value === '') return "''";
  if (/^[A-Za-z0-9_/.,:@%+=-]+$/.test(value)) return value;
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** The script text: literal pieces, each value quoted (a list becomes several quoted words). */
export function buildShellCommand(pieces: readonly string[], values: readonly unknown[]): string {
  let out = pieces[0] ?? '';
  values.forEach((value, i) => {
    out += Array.isArray(value) ? value.map((v) => quotePosix(String(v))).join(' ') : quotePosix(String(value));
    out += pieces[i + 1] ?? '';
  });
  return out;
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

class OutputCapture {
  private rest = '';
  private tail: string[] = [];

  constructor(
    private readonly stream: 'stdout' | 'stderr',
    private readonly onLine?: CommandSpec['onLine'],
  ) {}

  push(chunk: Buffer): void {
    const lines = (this.rest + chunk.toString('utf8')).split('\n');
    this.rest = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    this.tail.push(line);
    if (this.tail.length > 20) this.tail.shift();
    this.onLine?.(this.stream, line);
  }

  finish(): string {
    if (this.rest) this.line(this.rest);
    this.rest = '';
    return this.tail.join('\n').trim();
  }
}

/**
 * Runs a `run:` stage's script with `sh -c` in its own process group, so an abort (timeout or
 * Ctrl-C) kills the whole group: SIGTERM, then SIGKILL. Values are quoted as zx quotes them;
 * the process is spawned directly because zx's per-command machinery cost more than the
 * command itself in the make benchmark.
 */
export function runCommand(spec: CommandSpec): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    const script = buildShellCommand(spec.pieces, spec.values);
    const child = spawn(spec.shell ?? '/bin/sh', ['-c', script], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = new OutputCapture('stdout', spec.onLine);
    const err = new OutputCapture('stderr', spec.onLine);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      aborted = true;
      if (child.pid === undefined) return;
      const pid = child.pid;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), spec.killAfterMs ?? 2000);
      killTimer.unref();
    };
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });
    const done = (exitCode: number | null, signal: string | null): void => {
      spec.signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      const errTail = err.finish();
      const outTail = out.finish();
      resolve({ exitCode, signal, tail: errTail || outTail, aborted });
    };
    child.on('error', (error) => {
      err.push(Buffer.from(`${error.message}\n`));
      done(127, null);
    });
    child.on('close', (code, signal) => done(code, signal));
  });
}
