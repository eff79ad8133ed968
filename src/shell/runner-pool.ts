import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { buildShellCommand, quotePosix, type CommandOutcome, type CommandSpec } from './command.ts';

/**
 * Long-lived small processes that start `run:` commands for the executor. Forking a big
 * Node.js process costs far more than forking a small one, and the fork blocks the event
 * loop; a runner forks instead, so stages start about as cheaply as make's recipes. Each
 * command still runs as `/bin/sh -c SCRIPT` (or `/bin/sh FILE` for multi-line scripts) in a
 * process group of its own, with stdin from /dev/null and stdout/stderr to files, and is
 * killed by group on abort.
 */
// perl is part of every Debian base system; it can put a child in its own process group
// between fork and exec, which a POSIX shell cannot do without an extra `setsid` exec.
const RUNNER_SCRIPT = String.raw`$| = 1;
while (defined(my $out = <STDIN>)) {
  chomp $out;
  my $job = <STDIN>;
  last unless defined $job;
  chomp $job;
  my $pid = fork();
  if (!defined $pid) { print "pid 0\nexit 127\n"; next; }
  if ($pid == 0) {
    setpgrp(0, 0);
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>', "$out.out");
    open(STDERR, '>', "$out.err");
    if ($job =~ s/^c//) { exec('/bin/sh', '-c', $job); } else { $job =~ s/^f//; exec('/bin/sh', $job); }
    exit 127;
  }
  print "pid $pid\n";
  waitpid($pid, 0);
  my $st = $?;
  print 'exit ', (($st & 127) ? 128 + ($st & 127) : ($st >> 8)), "\n";
}
`;

interface Pending {
  onPid(pid: number): void;
  onExit(code: number): void;
}

class Runner {
  readonly child: ChildProcessWithoutNullStreams;
  private pending: Pending | undefined;
  private buffer = '';
  dead = false;

  constructor(cwd: string) {
    // Its own process group: a Ctrl-C at the terminal reaches refinery, which aborts the jobs.
    this.child = spawn('perl', ['-e', RUNNER_SCRIPT], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: process.env });
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
  start(outputPrefix: string, script: { inline: string } | { file: string }, pending: Pending): void {
    this.pending = pending;
    this.child.stdin.write(`${outputPrefix}\n${'inline' in script ? `c${script.inline}` : `f${script.file}`}\n`);
  }

  stop(): void {
    this.child.stdin.end();
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

let perlAvailable: boolean | undefined;

/** Whether perl is there to run the runners; without it commands are spawned directly. */
export function runnerPoolSupported(): boolean {
  if (perlAvailable === undefined) perlAvailable = spawnSync('perl', ['-e', '1'], { stdio: 'ignore' }).status === 0;
  return perlAvailable;
}

export class RunnerPool {
  private readonly idle: Runner[] = [];
  private readonly all = new Set<Runner>();

  constructor(private readonly cwd: string) {}

  private acquire(): Runner {
    let runner = this.idle.pop();
    while (runner?.dead) runner = this.idle.pop();
    if (!runner) {
      runner = new Runner(this.cwd);
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
      runner.start(spec.scriptFile, inline ? { inline: `${prelude}${body}` } : { file: spec.scriptFile }, {
        onPid: (p) => {
          pid = p;
          if (spec.signal.aborted) onAbort();
        },
        onExit: (code) => {
          spec.signal.removeEventListener('abort', onAbort);
          if (killTimer) clearTimeout(killTimer);
          this.release(runner);
          const err = tail(`${spec.scriptFile}.err`);
          const out = tail(`${spec.scriptFile}.out`);
          if (spec.onLine) {
            for (const line of out ? out.split('\n') : []) spec.onLine('stdout', line);
            for (const line of err ? err.split('\n') : []) spec.onLine('stderr', line);
          }
          for (const f of [spec.scriptFile, `${spec.scriptFile}.out`, `${spec.scriptFile}.err`]) rmSync(f, { force: true });
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
