import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildShellCommand, quotePosix, type CommandOutcome, type CommandSpec } from './command.ts';
import { parseSimpleCommand } from './simple-command.ts';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

/**
 * Long-lived small processes that start `run:` commands for the executor. Forking a big
 * Node.js process costs far more than forking a small one, and the fork blocks the event
 * loop; a runner forks instead, so stages start about as cheaply as make's recipes. A command
 * runs as `/bin/sh -c SCRIPT`, or, when it is one program with literal words and plain
 * redirections, directly (see simple-command.ts), in a process group of its own, with stdin
 * from /dev/null and stdout/stderr to files, and is killed by group on abort.
 */
// Python's os.posix_spawn starts a command the way make does (vfork-like, with the child in a
// process group of its own); perl (in every Debian base system) is the fallback: it can set
// the group between fork and exec, which sh cannot do without an extra `setsid` exec. Each
// runner reuses one pair of output files, truncated per command: creating and deleting files
// per command cost as much as the command itself in the make benchmark. The programs and their
// protocols are in runners/; they ship with the package's src/ and are found from the package
// root, so the compiled dist/ uses the same files.
const RUNNERS = path.join(PACKAGE_ROOT, 'src', 'engine', 'shell', 'runners');
export const PYTHON_RUNNER_FILE = path.join(RUNNERS, 'runner.py');
export const PERL_RUNNER_FILE = path.join(RUNNERS, 'runner.pl');

interface RunnerProgram {
  command: string;
  args: string[];
  /** python reads JSON jobs and starts simple commands without a shell; perl takes `c`/`f` lines. */
  protocol: 'json' | 'lines';
}

interface Pending {
  onPid(pid: number): void;
  /** `sizes`: the byte counts of the command's stdout and stderr files, where the runner tells them. */
  onExit(code: number, sizes?: [number, number]): void;
}

class Runner {
  readonly child: ChildProcessWithoutNullStreams;
  private pending: Pending | undefined;
  private buffer = '';
  dead = false;

  constructor(
    cwd: string,
    program: RunnerProgram,
    env: NodeJS.ProcessEnv,
    readonly outFile: string,
    readonly errFile: string,
  ) {
    // Its own process group: a Ctrl-C at the terminal reaches refinery, which aborts the jobs.
    this.child = spawn(program.command, [...program.args, outFile, errFile], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env });
    this.child.unref();
    this.child.stdout.on('data', (d: Buffer) => this.read(d.toString()));
    this.child.on('exit', () => {
      this.dead = true;
      this.pending?.onExit(-1);
      this.pending = undefined;
    });
    this.child.stdin.on('error', () => {
      this.dead = true;
    });
  }

  private read(text: string): void {
    const lines = (this.buffer + text).split('\n');
    this.buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('pid ')) this.pending?.onPid(Number(line.slice(4)));
      else if (line.startsWith('exit ')) {
        const p = this.pending;
        this.pending = undefined;
        const [code, out, err] = line.slice(5).split(' ').map(Number);
        p?.onExit(code ?? -1, out !== undefined && err !== undefined ? [out, err] : undefined);
      }
    }
  }

  /** Sends one job line (without its newline). */
  start(job: string, pending: Pending): void {
    this.pending = pending;
    this.child.stdin.write(`${job}\n`);
  }

  stop(): void {
    this.child.stdin.end();
  }
}

/** The last lines of a command's output file, reading at most its last 64 KiB. */
function tail(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString('utf8').trimEnd().split('\n').slice(-20).join('\n');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

let program: RunnerProgram | null | undefined;

function works(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

/** The runner program this machine has: python3 with posix_spawn, else perl, else none. */
function runnerProgram(): RunnerProgram | null {
  if (program === undefined) {
    const python = ['/usr/bin/python3', 'python3'].find((p) => works(p, ['-c', 'import os; os.posix_spawn']));
    if (python) program = { command: python, args: [PYTHON_RUNNER_FILE], protocol: 'json' };
    else program = works('perl', ['-e', '1']) ? { command: 'perl', args: [PERL_RUNNER_FILE], protocol: 'lines' } : null;
  }
  return program;
}

/** Whether commands can go through runners here; without them they are spawned directly. */
export function runnerPoolSupported(): boolean {
  return runnerProgram() !== null;
}

export class RunnerPool {
  private readonly idle: Runner[] = [];
  private readonly all = new Set<Runner>();

  private made = 0;
  /** The environment the runners start with; each job sends only what differs from it. */
  private readonly env: NodeJS.ProcessEnv = { ...process.env };

  /** `scratchDir` holds each runner's output files; it must exist. */
  constructor(
    private readonly cwd: string,
    private readonly scratchDir: string,
  ) {}

  private acquire(): Runner {
    let runner = this.idle.pop();
    while (runner?.dead) runner = this.idle.pop();
    if (!runner) {
      this.made += 1;
      const base = path.join(this.scratchDir, `runner-${this.made}`);
      runner = new Runner(this.cwd, runnerProgram() as RunnerProgram, this.env, `${base}.out`, `${base}.err`);
      this.all.add(runner);
    }
    return runner;
  }

  private release(runner: Runner): void {
    if (!runner.dead) this.idle.push(runner);
    else this.all.delete(runner);
  }

  /** Runs one command; `scriptFile` is a scratch path (for long scripts and the output files), removed after. */
  /** The job line for a runner; a script too long for one line of the perl protocol goes to `scriptFile`. */
  private encode(spec: CommandSpec & { scriptFile: string }): { job: string; file?: string } {
    const body = buildShellCommand(spec.pieces, spec.values);
    const cd = spec.cwd === this.cwd ? '' : `cd ${quotePosix(spec.cwd)} || exit 1; `;
    const changed = Object.entries(spec.env).filter(([k, v]) => v !== undefined && this.env[k] !== v) as [string, string][];
    if (runnerProgram()?.protocol === 'json') {
      const unset = Object.keys(this.env).filter((k) => spec.env[k] === undefined);
      // The runner looks programs up in its own PATH; a stage that changes PATH goes through sh.
      const pathChanged = changed.some(([k]) => k === 'PATH') || unset.includes('PATH');
      const direct = cd || pathChanged ? undefined : parseSimpleCommand(body);
      const job = {
        s: `${cd}${body}`,
        ...(direct ? { a: direct.argv, r: direct.redirects.map((r) => [r.fd, r.mode, r.path]) } : {}),
        ...(changed.length ? { e: Object.fromEntries(changed) } : {}),
        ...(unset.length ? { u: unset } : {}),
      };
      return { job: JSON.stringify(job) };
    }
    const exports = changed.filter(([k]) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)).map(([k, v]) => `export ${k}=${quotePosix(v)}`);
    const prelude = `${exports.length ? `${exports.join('; ')}; ` : ''}${cd}`;
    if (!/[\n\r]/.test(body) && body.length < 16_000) return { job: `c${prelude}${body}` };
    writeFileSync(spec.scriptFile, `${prelude}\n${body}\n`);
    return { job: `f${spec.scriptFile}`, file: spec.scriptFile };
  }

  /** Runs one command; `scriptFile` is a scratch path for a long script, removed after. */
  run(spec: CommandSpec & { scriptFile: string }): Promise<CommandOutcome> {
    const { job, file } = this.encode(spec);
    const runner = this.acquire();
    return new Promise((resolve) => {
      let pid: number | undefined;
      let aborted = false;
      let killTimer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        aborted = true;
        if (pid === undefined) return;
        const group = pid;
        killGroup(group, 'SIGTERM');
        killTimer = setTimeout(() => killGroup(group, 'SIGKILL'), spec.killAfterMs ?? 2000);
        killTimer.unref();
      };
      runner.start(job, {
        onPid: (p) => {
          pid = p;
          if (spec.signal.aborted) onAbort();
        },
        onExit: (code, sizes) => {
          spec.signal.removeEventListener('abort', onAbort);
          if (killTimer) clearTimeout(killTimer);
          // Files the runner says are empty are not opened.
          const err = sizes?.[1] === 0 ? '' : tail(runner.errFile);
          const out = sizes?.[0] === 0 ? '' : tail(runner.outFile);
          this.release(runner);
          if (spec.onLine) {
            for (const line of out ? out.split('\n') : []) spec.onLine('stdout', line);
            for (const line of err ? err.split('\n') : []) spec.onLine('stderr', line);
          }
          if (file) rmSync(file, { force: true });
          // sh reports a command killed by signal N as exit status 128+N.
          const signal = code > 128 && code < 160 ? signalName(code - 128) : null;
          resolve({
            exitCode: code === -1 ? null : signal ? null : code,
            signal: code === -1 ? 'runner exited' : signal,
            tail: err || out,
            aborted,
          });
        },
      });
      spec.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    for (const r of this.all) r.stop();
    this.all.clear();
    this.idle.length = 0;
  }
}

function signalName(n: number): string {
  const names: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 6: 'SIGABRT', 9: 'SIGKILL', 13: 'SIGPIPE', 15: 'SIGTERM' };
  return names[n] ?? `signal ${n}`;
}
