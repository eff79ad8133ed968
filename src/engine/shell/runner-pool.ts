import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { buildShellCommand, quotePosix, runCommand, type CommandOutcome, type CommandSpec } from './command.ts';
import { MACHINE_RUNNER_PROGRAMS, type RunnerProgram, type RunnerPrograms } from './runner-programs.ts';
import { parseSimpleCommand } from './simple-command.ts';

/**
 * Long-lived small processes that start `run:` commands for the executor. Forking a big
 * Node.js process costs far more than forking a small one, and the fork blocks the event
 * loop; a runner forks instead, so stages start about as cheaply as make's recipes. A command
 * runs as `/bin/sh -c SCRIPT`, or, when it is one program with literal words and plain
 * redirections, directly (see simple-command.ts), in a process group of its own, with stdin
 * from /dev/null and stdout/stderr to files, and is killed by group on abort.
 */
// Each runner reuses one pair of output files, truncated per command: creating and deleting
// files per command cost as much as the command itself in the make benchmark. Whether python
// runs the runners, or Node spawns each command itself, is found out by starting them:
// runner-programs.ts.

interface Pending {
  onPid(pid: number): void;
  /** The job waited for a token and was cancelled before it started (jobserver runners only). */
  onCancelled(): void;
  /** `sizes`: the byte counts of the command's stdout and stderr files, where the runner tells them. */
  onExit(code: number, sizes?: [number, number]): void;
  /** The runner ended before it said `ready`, so it never read the job: the job did not start. */
  onNotStarted(): void;
}

class Runner {
  readonly child: ChildProcessWithoutNullStreams;
  private pending: Pending | undefined;
  private buffer = '';
  /** A job is sent before the runner is ready (no round trip); until then it may be unread. */
  private ready = false;
  /** Its job's command started (the runner said its pid): a job without one may be waiting for a token. */
  private started = false;
  dead = false;

  constructor(
    cwd: string,
    readonly program: RunnerProgram,
    env: NodeJS.ProcessEnv,
    readonly outFile: string,
    readonly errFile: string,
    /** The jobserver FIFO and how many tokens this runner puts in it; absent: no jobserver. */
    readonly tokens?: { fifo: string; add: number },
  ) {
    const tokenArgs = tokens ? [tokens.fifo, String(tokens.add)] : [];
    // Its own process group: a Ctrl-C at the terminal reaches refinery, which aborts the jobs.
    this.child = spawn(program.command, [...program.args, outFile, errFile, ...tokenArgs], {
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env,
    });
    this.child.unref();
    this.child.stdout.on('data', (d: Buffer) => this.read(d.toString()));
    // 'close' rather than 'exit': every line the runner wrote (its `ready`, a last `exit`) is
    // read by then. A program that cannot be started emits 'error', then 'close'.
    this.child.on('close', () => this.ended());
    this.child.on('error', () => {
      this.dead = true;
    });
    this.child.stdin.on('error', () => {
      this.dead = true;
    });
  }

  private ended(): void {
    this.dead = true;
    const p = this.pending;
    this.pending = undefined;
    if (this.ready) p?.onExit(-1);
    else p?.onNotStarted();
  }

  private read(text: string): void {
    const lines = (this.buffer + text).split('\n');
    this.buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') this.ready = true;
      else if (line.startsWith('pid ')) {
        this.started = true;
        this.pending?.onPid(Number(line.slice(4)));
      } else if (line === 'cancelled') {
        const p = this.pending;
        this.pending = undefined;
        p?.onCancelled();
      } else if (line.startsWith('exit ')) {
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
    this.started = false;
    this.child.stdin.write(`${job}\n`);
  }

  /** Whether it holds a job whose command has not started: one waiting for a jobserver token. */
  get waiting(): boolean {
    return this.tokens !== undefined && this.pending !== undefined && !this.started;
  }

  /** Drops the job while it waits for a token; ignored by the runner once it started. */
  cancel(): void {
    this.say('cancel');
  }

  /** Gives back the token the runner kept after a command failed (runner.py). */
  releaseToken(): void {
    this.say('release');
  }

  private say(line: string): void {
    if (!this.dead && !this.child.stdin.writableEnded) this.child.stdin.write(`${line}\n`);
  }

  stop(): void {
    this.child.stdin.end();
  }
}

/** At most `count` jobs at once, in the order they asked. */
class Slots {
  private readonly waiting: Array<() => void> = [];

  constructor(private free: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
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

/**
 * Whether commands may go through runners here: yes until runners of every program failed to
 * start in this process (the pool then spawns the commands directly anyway).
 */
export function runnerPoolSupported(): boolean {
  return MACHINE_RUNNER_PROGRAMS.current() !== null;
}

export class RunnerPool {
  private readonly idle: Runner[] = [];
  private readonly all = new Set<Runner>();

  private made = 0;
  /** The environment the runners start with; each job sends only what differs from it. */
  private readonly env: NodeJS.ProcessEnv = { ...process.env };
  /** Tokens put in the jobserver FIFO so far (one per runner, up to `commandsAtOnce`). */
  private tokensGiven = 0;
  /** With a jobserver: the limit for commands that do not take its tokens (spawned directly). */
  private readonly untokened: Slots | undefined;

  /**
   * `scratchDir` holds each runner's output files; it must exist. `commandsAtOnce`: the runners
   * share a jobserver that lets that many commands run at once, and the pool may be given more
   * jobs than that (the executor gives it waitingJobs more): those wait in their runners and
   * start the moment a command ends (see runner.py); commands spawned directly keep the limit here.
   */
  constructor(
    private readonly cwd: string,
    private readonly scratchDir: string,
    private readonly programs: RunnerPrograms = MACHINE_RUNNER_PROGRAMS,
    private readonly commandsAtOnce?: number,
  ) {
    if (commandsAtOnce !== undefined) this.untokened = new Slots(commandsAtOnce);
  }

  /**
   * Drops every job waiting for a jobserver token: the run stopped after a failure, and those
   * must not start. Each answers at once, as not started (`notStarted`).
   */
  dropWaiting(): void {
    // A job already on its way here (its stage was being prepared as the failure came in) must
    // not start either: it would take the token the failed command gives back.
    if (this.holdsWaitingJobs) this.halted = true;
    for (const runner of this.all) if (runner.waiting) runner.cancel();
  }

  /** Set once a failure stopped the run: no job given after that starts. */
  private halted = false;

  /** Whether a job given to the pool may wait in a runner for a jobserver token before it starts. */
  get holdsWaitingJobs(): boolean {
    return this.commandsAtOnce !== undefined;
  }

  /** An idle runner (of a program that has worked), else a new runner of `program`. */
  private acquire(program: RunnerProgram): Runner {
    let runner = this.idle.pop();
    while (runner?.dead) runner = this.idle.pop();
    return runner ?? this.start(program);
  }

  private start(program: RunnerProgram): Runner {
    this.made += 1;
    const base = path.join(this.scratchDir, `runner-${this.made}`);
    const runner = new Runner(this.cwd, program, this.env, `${base}.out`, `${base}.err`, this.tokensFor());
    this.all.add(runner);
    return runner;
  }

  /**
   * Starts runners until `count` are alive, ahead of any command: a watch does so when it
   * starts, so the first edit's commands do not wait for a runner to be ready (the first
   * command the watch ran waited ~150 ms here). A runner that cannot start ends unnoticed; the
   * first job sent to it learns that as before.
   */
  warm(count: number): void {
    const program = this.programs.current();
    if (!program) return;
    for (const r of this.all) if (r.dead) this.all.delete(r);
    while (this.all.size < count) this.idle.push(this.start(program));
  }

  /** The jobserver arguments of a new runner. */
  private tokensFor(): { fifo: string; add: number } | undefined {
    if (this.commandsAtOnce === undefined) return undefined;
    const add = this.tokensGiven < this.commandsAtOnce ? 1 : 0;
    this.tokensGiven += add;
    return { fifo: path.join(this.scratchDir, 'jobserver'), add };
  }

  private release(runner: Runner): void {
    if (!runner.dead) this.idle.push(runner);
    else this.all.delete(runner);
  }

  /** The JSON job line for a runner (see runner.py). */
  private encode(spec: CommandSpec): string {
    const body = buildShellCommand(spec.pieces, spec.values);
    const cd = spec.cwd === this.cwd ? '' : `cd ${quotePosix(spec.cwd)} || exit 1; `;
    const changed = Object.entries(spec.env).filter(([k, v]) => v !== undefined && this.env[k] !== v) as [string, string][];
    const unset = Object.keys(this.env).filter((k) => spec.env[k] === undefined);
    // The runner looks programs up in its own PATH; a stage that changes PATH goes through sh.
    const pathChanged = changed.some(([k]) => k === 'PATH') || unset.includes('PATH');
    const direct = cd || pathChanged ? undefined : parseSimpleCommand(body);
    return JSON.stringify({
      s: `${cd}${body}`,
      ...(direct ? { a: direct.argv, r: direct.redirects.map((r) => [r.fd, r.mode, r.path]) } : {}),
      ...(changed.length ? { e: Object.fromEntries(changed) } : {}),
      ...(unset.length ? { u: unset } : {}),
    });
  }

  /**
   * Runs one command. A job whose runner could not start goes to the next runner program,
   * and, when none works, is spawned directly: it runs once either way.
   */
  async run(spec: PoolJob): Promise<CommandOutcome> {
    if (this.halted) return { ...NOT_STARTED, aborted: false, notStarted: true };
    let program = this.programs.current();
    while (program) {
      const runner = this.acquire(program);
      const outcome = await this.runOn(runner, spec);
      if (outcome) {
        this.programs.worked(runner.program);
        return outcome;
      }
      program = this.programs.failed(runner.program);
    }
    return this.untokened ? this.limited(spec, () => this.spawnDirectly(spec)) : this.spawnDirectly(spec);
  }

  private spawnDirectly(spec: PoolJob): Promise<CommandOutcome> {
    spec.onStart?.();
    return runCommand(spec);
  }

  /** Runs `job` within the limit kept without the jobserver's tokens; a job aborted while it waited does not start. */
  private limited(spec: PoolJob, job: () => Promise<CommandOutcome>): Promise<CommandOutcome> {
    return (this.untokened as Slots).run(async () => (spec.signal.aborted ? NOT_STARTED : job()));
  }

  /** Runs one command on `runner`; undefined when the runner ended before it read the job. */
  private runOn(runner: Runner, spec: PoolJob): Promise<CommandOutcome | undefined> {
    const job = this.encode(spec);
    return new Promise((resolve) => {
      let pid: number | undefined;
      let aborted = false;
      let killTimer: NodeJS.Timeout | undefined;
      const onAbort = (): void => {
        aborted = true;
        if (pid === undefined) {
          // A job waiting for a jobserver token is dropped; one already started says its pid next.
          if (runner.tokens) runner.cancel();
          return;
        }
        const group = pid;
        killGroup(group, 'SIGTERM');
        killTimer = setTimeout(() => killGroup(group, 'SIGKILL'), spec.killAfterMs ?? 2000);
        killTimer.unref();
      };
      // Ends the job's bookkeeping; the runner is free again (unless it died).
      const settle = (outcome: CommandOutcome | undefined): void => {
        spec.signal.removeEventListener('abort', onAbort);
        if (killTimer) clearTimeout(killTimer);
        this.release(runner);
        resolve(outcome);
      };
      // Without a jobserver the command starts as the runner reads it; with one, when it says its pid.
      if (!runner.tokens) spec.onStart?.();
      runner.start(job, {
        onPid: (p) => {
          pid = p;
          if (runner.tokens) spec.onStart?.();
          if (spec.signal.aborted) onAbort();
        },
        onCancelled: () => settle(aborted ? NOT_STARTED : { ...NOT_STARTED, aborted: false, notStarted: true }),
        onExit: (code, sizes) => {
          // The runner keeps its token after a failure until told. A failure that stops the run
          // drops the jobs that wait first, in this same turn: each runner reads its `cancel`
          // before the token can reach it (runner.py), so none of them starts.
          if (runner.tokens && code !== 0) {
            if (spec.stopsRunIfFailed) this.dropWaiting();
            runner.releaseToken();
          }
          settle(outcomeOf(runner, spec, code, sizes, aborted));
        },
        onNotStarted: () => settle(undefined),
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

/**
 * A job for the pool: a command, who to tell when it starts, and whether its failure stops the
 * run (the jobs waiting in runners are then dropped before its token is given back).
 */
export type PoolJob = CommandSpec & { onStart?: () => void; stopsRunIfFailed?: boolean };

/** A job that was aborted before its command started. */
const NOT_STARTED: CommandOutcome = { exitCode: null, signal: null, tail: '', aborted: true };

/** What a command the runner answered for did; its output lines go to `onLine` first. */
function outcomeOf(runner: Runner, spec: CommandSpec, code: number, sizes: [number, number] | undefined, aborted: boolean): CommandOutcome {
  // Files the runner says are empty are not opened.
  const err = sizes?.[1] === 0 ? '' : tail(runner.errFile);
  const out = sizes?.[0] === 0 ? '' : tail(runner.outFile);
  if (spec.onLine) {
    for (const line of out ? out.split('\n') : []) spec.onLine('stdout', line);
    for (const line of err ? err.split('\n') : []) spec.onLine('stderr', line);
  }
  // sh reports a command killed by signal N as exit status 128+N.
  const signal = code > 128 && code < 160 ? signalName(code - 128) : null;
  return {
    exitCode: code === -1 ? null : signal ? null : code,
    signal: code === -1 ? 'runner exited' : signal,
    tail: err || out,
    aborted,
  };
}

function signalName(n: number): string {
  const names: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 6: 'SIGABRT', 9: 'SIGKILL', 13: 'SIGPIPE', 15: 'SIGTERM' };
  return names[n] ?? `signal ${n}`;
}
