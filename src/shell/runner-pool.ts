import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { buildShellCommand, quotePosix, type CommandOutcome, type CommandSpec } from './command.ts';

/**
 * Long-lived /bin/sh processes that start `run:` commands for the executor. Forking a big
 * Node.js process costs far more than forking a small shell, and a fork blocks the event
 * loop; a runner forks instead, so stages start as cheaply as make's recipes do. Each command
 * still runs as `sh SCRIPT` in a session (process group) of its own, with stdin from
 * /dev/null, stdout and stderr to files, and is killed by group on abort.
 */
const RUNNER_SCRIPT = `while IFS= read -r f; do
  setsid /bin/sh "$f" >"$f.out" 2>"$f.err" </dev/null &
  echo "pid $!"
  wait $!
  echo "exit $?"
done
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
    this.child = spawn('/bin/sh', ['-c', RUNNER_SCRIPT], { cwd, stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
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

  start(scriptFile: string, pending: Pending): void {
    this.pending = pending;
    this.child.stdin.write(`${scriptFile}\n`);
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

let setsidAvailable: boolean | undefined;

/** Whether the `setsid` program exists (util-linux); without it commands are spawned directly. */
export function runnerPoolSupported(): boolean {
  if (setsidAvailable === undefined) setsidAvailable = spawnSync('setsid', ['true'], { stdio: 'ignore' }).status === 0;
  return setsidAvailable;
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

  /** Runs one command; `scriptFile` is a scratch path the pool writes and removes. */
  run(spec: CommandSpec & { scriptFile: string }): Promise<CommandOutcome> {
    const exports = Object.entries(spec.env)
      .filter(([k, v]) => v !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(k))
      .map(([k, v]) => `export ${k}=${quotePosix(String(v))}`);
    writeFileSync(spec.scriptFile, `${exports.join('\n')}\ncd ${quotePosix(spec.cwd)} || exit 1\n${buildShellCommand(spec.pieces, spec.values)}\n`);
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
      runner.start(spec.scriptFile, {
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
