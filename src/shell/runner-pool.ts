import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildShellCommand, quotePosix, type CommandOutcome, type CommandSpec } from './command.ts';

/**
 * Long-lived small processes that start `run:` commands for the executor. Forking a big
 * Node.js process costs far more than forking a small one, and the fork blocks the event
 * loop; a runner forks instead, so stages start about as cheaply as make's recipes. Each
 * command still runs as `/bin/sh -c SCRIPT` (or `/bin/sh FILE` for multi-line scripts) in a
 * process group of its own, with stdin from /dev/null and stdout/stderr to files, and is
 * killed by group on abort.
 */
// Python's os.posix_spawn starts a command the way make does (vfork-like, with the child in a
// process group of its own); perl (in every Debian base system) is the fallback: it can set
// the group between fork and exec, which sh cannot do without an extra `setsid` exec. Each
// runner reuses one pair of output files, truncated per command: creating and deleting files
// per command cost as much as the command itself in the make benchmark.
const PYTHON_RUNNER = String.raw`import os, sys
out_path, err_path = sys.argv[1], sys.argv[2]
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
actions = [(os.POSIX_SPAWN_OPEN, 0, '/dev/null', os.O_RDONLY, 0), (os.POSIX_SPAWN_OPEN, 1, out_path, flags, 0o644), (os.POSIX_SPAWN_OPEN, 2, err_path, flags, 0o644)]
read, write = sys.stdin.buffer.readline, sys.stdout.write
while True:
    raw = read()
    if not raw:
        break
    job = raw.decode('utf-8', 'surrogateescape').rstrip('\n')
    argv = ['/bin/sh', '-c', job[1:]] if job.startswith('c') else ['/bin/sh', job[1:]]
    try:
        pid = os.posix_spawn('/bin/sh', argv, os.environ, file_actions=actions, setpgroup=0)
    except OSError:
        write('pid 0\nexit 127\n')
        sys.stdout.flush()
        continue
    write('pid %d\n' % pid)
    sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    write('exit %d\n' % (128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)))
    sys.stdout.flush()
`;

const PERL_RUNNER = String.raw`$| = 1;
my ($outfile, $errfile) = @ARGV;
while (defined(my $job = <STDIN>)) {
  chomp $job;
  my $pid = fork();
  if (!defined $pid) { print "pid 0\nexit 127\n"; next; }
  if ($pid == 0) {
    setpgrp(0, 0);
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', $outfile);
    open(STDERR, '>', $errfile);
    if ($job =~ s/^c//) { exec('/bin/sh', '-c', $job); } else { $job =~ s/^f//; exec('/bin/sh', $job); }
    exit 127;
  }
  print "pid $pid\n";
  waitpid($pid, 0);
  my $st = $?;
  print 'exit ', (($st & 127) ? 128 + ($st & 127) : ($st >> 8)), "\n";
}
`;

interface RunnerProgram {
  command: string;
  args: string[];
}

interface Pending {
  onPid(pid: number): void;
  onExit(code: number): void;
}

class Runner {
  readonly child: ChildProcessWithoutNullStreams;
  private pending: Pending | undefined;
  private buffer = '';
  dead = false;

  constructor(
    cwd: string,
    program: RunnerProgram,
    readonly outFile: string,
    readonly errFile: string,
  ) {
    // Its own process group: a Ctrl-C at the terminal reaches refinery, which aborts the jobs.
    this.child = spawn(program.command, [...program.args, outFile, errFile], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: process.env });
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
        p?.onExit(Number(line.slice(5)));
      }
    }
  }

  /** A one-line script goes inline (`sh -c`); a longer one through its file. */
  start(script: { inline: string } | { file: string }, pending: Pending): void {
    this.pending = pending;
    this.child.stdin.write(`${'inline' in script ? `c${script.inline}` : `f${script.file}`}\n`);
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
    if (python) program = { command: python, args: ['-c', PYTHON_RUNNER] };
    else program = works('perl', ['-e', '1']) ? { command: 'perl', args: ['-e', PERL_RUNNER] } : null;
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
      runner = new Runner(this.cwd, runnerProgram() as RunnerProgram, `${base}.out`, `${base}.err`);
      this.all.add(runner);
    }
    return runner;
  }

  private release(runner: Runner): void {
    if (!runner.dead) this.idle.push(runner);
    else this.all.delete(runner);
  }

  /** Runs one command; `scriptFile` is a scratch path (for long scripts and the output files), removed after. */
  run(spec: CommandSpec & { scriptFile: string }): Promise<CommandOutcome> {
    // The runners have refinery's environment: only what differs is exported.
    const exports = Object.entries(spec.env)
      .filter(([k, v]) => v !== undefined && process.env[k] !== v && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}=${quotePosix(String(v))}`);
    const body = buildShellCommand(spec.pieces, spec.values);
    const prelude = `${exports.length ? `${exports.join('; ')}; ` : ''}${spec.cwd === this.cwd ? '' : `cd ${quotePosix(spec.cwd)} || exit 1; `}`;
    const inline = !/[\n\r]/.test(body) && body.length < 16_000;
    if (!inline) writeFileSync(spec.scriptFile, `${prelude}\n${body}\n`);
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
      runner.start(inline ? { inline: `${prelude}${body}` } : { file: spec.scriptFile }, {
        onPid: (p) => {
          pid = p;
          if (spec.signal.aborted) onAbort();
        },
        onExit: (code) => {
          spec.signal.removeEventListener('abort', onAbort);
          if (killTimer) clearTimeout(killTimer);
          this.release(runner);
          const err = tail(runner.errFile);
          const out = tail(runner.outFile);
          if (spec.onLine) {
            for (const line of out ? out.split('\n') : []) spec.onLine('stdout', line);
            for (const line of err ? err.split('\n') : []) spec.onLine('stderr', line);
          }
          if (!inline) rmSync(spec.scriptFile, { force: true });
          // sh reports a command killed by signal N as exit status 128+N.
          const signal = code > 128 && code < 160 ? signalName(code - 128) : null;
          resolve({ exitCode: code === -1 ? null : signal ? null : code, signal: code === -1 ? 'runner exited' : signal, tail: err || out, aborted });
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
