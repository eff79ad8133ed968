import type { ChildProcess } from 'node:child_process';
import { startCli } from '../../helpers/project.ts';

export type WatchEvent = Record<string, unknown> & { type: string; runId: string; stage?: string; status?: string };

interface Waiter {
  test: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** A running `refinery watch --json -v`: its events and stderr lines, and promises that resolve on them. */
export class WatchProcess {
  readonly events: WatchEvent[] = [];
  stderr = '';
  private stdoutBuffer = '';
  private readonly waiters = new Set<Waiter>();
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  /** `directory`: the project, given with -C (the process then runs in `cwd`, elsewhere); `env`: added to the watch's. */
  constructor(args: readonly string[], cwd: string, options: { mqtt?: boolean; directory?: string; env?: NodeJS.ProcessEnv } = {}) {
    const global = options.directory ? ['-C', options.directory] : [];
    const argv = [...global, 'watch', '--json', '-v', ...(options.mqtt ? [] : ['--no-mqtt']), ...args];
    this.child = startCli(argv, { cwd, ...(options.env ? { env: options.env } : {}) });
    this.child.stdout?.on('data', (d: Buffer) => {
      this.stdoutBuffer += d.toString();
      const lines = this.stdoutBuffer.split('\n');
      this.stdoutBuffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('{')) this.events.push(JSON.parse(line) as WatchEvent);
      this.check();
    });
    this.child.stderr?.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      this.check();
    });
    this.exited = new Promise((resolve) =>
      this.child.on('close', (code, signal) => {
        this.check();
        for (const w of this.waiters) w.reject(new Error(`watch exited (${code ?? signal}) while waiting\nstderr:\n${this.stderr}`));
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Re-evaluates the waiting conditions (for conditions over things other than its output). */
  check(): void {
    for (const w of [...this.waiters]) {
      if (!w.test()) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.resolve();
    }
  }

  /** Resolves when the condition holds on what was received so far (checked on every output). */
  until(test: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        test,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters.delete(waiter);
          reject(
            new Error(
              `timed out waiting for ${what}\nevents: ${this.events.map((e) => `${e.type} ${e.stage ?? ''} ${e.status ?? ''}`).join('\n')}\nstderr:\n${this.stderr}`,
            ),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
    });
  }

  count(type: string, stage?: string, status?: string): number {
    return this.events.filter(
      (e) => e.type === type && (stage === undefined || e.stage === stage) && (status === undefined || e.status === status),
    ).length;
  }

  /** Waits for the n-th event of a kind (1-based). */
  nth(n: number, type: string, stage?: string, status?: string): Promise<void> {
    return this.until(() => this.count(type, stage, status) >= n, `${type} ${stage ?? ''} ${status ?? ''} #${n}`);
  }

  /** How many `command`s this watch says it answered (`-v`'s "answered a run (exit 0)" lines). */
  answered(command: string): number {
    return this.stderr.split('\n').filter((l) => l.includes(`answered a ${command} (exit`)).length;
  }

  /**
   * Waits until the watch has said it answered `n` `command`s, then checks it said no more. It
   * says so after the answer went out, so a client can exit before the line arrives here.
   */
  async answeredTimes(command: string, n: number): Promise<number> {
    await this.until(() => this.answered(command) >= n, `${n} answered ${command}s`);
    return this.answered(command);
  }

  /** Stage ids that started in a run, in order. */
  started(): string[] {
    return this.events.filter((e) => e.type === 'stage-start').map((e) => e.stage as string);
  }

  signal(sig: NodeJS.Signals): void {
    this.child.kill(sig);
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
    return this.exited;
  }
}
