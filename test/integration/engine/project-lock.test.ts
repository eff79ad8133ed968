import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import {
  demoProject,
  REPO_ROOT,
  runCli,
  startCli,
  stageEnds,
  tempProject,
  type CliResult,
  type TempProject,
} from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const WORKER = path.join(REPO_ROOT, 'test/integration/engine/fixtures/lock-worker.ts');
const TSX_LOADER = path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs');
const WORKERS = 8;
const TRIALS = 30;

interface Attempt {
  trial: string;
  got: boolean;
  overlap?: boolean;
  holder?: { pid: number };
  problem?: unknown;
}

/** A worker process that answers each trial line with one JSON line. */
class Worker {
  private readonly child: ChildProcess;
  private readonly waiting: Array<(line: string) => void> = [];
  readonly ready: Promise<string>;
  stderr = '';
  exited = false;

  constructor(root: string) {
    this.child = spawn(process.execPath, ['--import', TSX_LOADER, WORKER, root, '5'], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.on('exit', (code) => {
      this.exited = true;
      for (const waiter of this.waiting.splice(0))
        waiter(JSON.stringify({ trial: '?', got: false, problem: `worker exited (${code}): ${this.stderr}` }));
    });
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on('line', (line) => this.waiting.shift()?.(line));
    this.ready = this.next();
  }

  next(): Promise<string> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  send(line: string): void {
    this.child.stdin?.write(`${line}\n`);
  }

  quit(): Promise<void> {
    return new Promise((resolve) => {
      if (this.exited) return resolve();
      this.child.once('exit', () => resolve());
      this.send('quit');
    });
  }
}

function processStart(pid: number): string | undefined {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

function deadPid(): number {
  const child = spawnSync('sh', ['-c', 'echo $$']);
  return Number(child.stdout.toString().trim());
}

/** Lock files left by processes that are gone, in every form one can take. */
const STALE_LOCKS: Record<string, () => string> = {
  'a record of a process that exited': () =>
    `${JSON.stringify({ pid: deadPid(), start: '12345', boot: bootId(), host: os.hostname(), token: 'dead' })}\n`,
  'a record naming pid 1 with a start time that is not pid 1s': () =>
    `${JSON.stringify({ pid: 1, start: '999999999', boot: bootId(), host: os.hostname(), token: 'pid1' })}\n`,
  'a record from before the last boot': () =>
    `${JSON.stringify({ pid: process.pid, start: '1', boot: '00000000-0000-0000-0000-000000000000', host: os.hostname(), token: 'boot' })}\n`,
  'an older refinery bare pid 1': () => '1',
  'an empty file': () => '',
};

/** Holders that found another one inside: the marker file is created exclusively, so any overlap shows, however short. */
function overlaps(attempts: Attempt[]): string[] {
  return attempts.filter((a) => a.got && a.overlap).map((a) => `trial ${a.trial}: found another process inside`);
}

describe('project lock', () => {
  it('project lock - 8 processes taking it at the same instant never hold it together, with or without a stale lock present', async () => {
    project = tempProject();
    const lockFile = project.path('.refinery/lock');
    const workers = Array.from({ length: WORKERS }, () => new Worker(project!.root));
    try {
      await Promise.all(workers.map((w) => w.ready));
      const problems: string[] = [];
      const staleKinds = Object.keys(STALE_LOCKS);
      let trials = 0;
      for (const stale of [undefined, ...staleKinds]) {
        for (let t = 0; t < (stale ? Math.ceil(TRIALS / 2) : TRIALS); t += 1) {
          const trial = `${stale ?? 'no lock'} #${t}`;
          if (stale) {
            writeFileSync(lockFile, (STALE_LOCKS[stale] as () => string)());
          }
          const answers = workers.map((w) => w.next());
          for (const w of workers) w.send(trial);
          const attempts = (await Promise.all(answers)).map((line) => JSON.parse(line) as Attempt);
          trials += 1;
          problems.push(...overlaps(attempts));
          const winners = attempts.filter((a) => a.got).length;
          if (winners === 0)
            problems.push(`trial ${trial}: nobody got the lock (${JSON.stringify(attempts.map((a) => a.holder ?? a.problem))})`);
          for (const a of attempts) if (a.problem) problems.push(`trial ${trial}: ${JSON.stringify(a.problem)}`);
          if (existsSync(lockFile)) {
            problems.push(`trial ${trial}: the lock is still there after every process finished`);
            rmSync(lockFile);
          }
        }
      }
      expect(problems).toEqual([]);
      expect(trials).toBeGreaterThanOrEqual(TRIALS * 2);
      // Nothing is left behind: no private lock copies, no takeover markers.
      expect(readdirSync(project.path('.refinery')).filter((f) => f !== 'lock')).toEqual([]);
    } finally {
      await Promise.all(workers.map((w) => w.quit()));
    }
  });

  it.each([
    ['an older refinery bare pid 1', '1\n'],
    [
      'a record naming pid 1 with a start time that is not pid 1s',
      () => `${JSON.stringify({ pid: 1, start: '999999999', boot: bootId(), host: os.hostname(), token: 't' })}\n`,
    ],
    [
      'a record of this machine before its last boot',
      () =>
        `${JSON.stringify({ pid: 1, start: processStart(1), boot: '00000000-0000-0000-0000-000000000000', host: os.hostname(), token: 't' })}\n`,
    ],
  ])('project lock - a lock file naming pid 1 does not block a run: %s', async (_name, content) => {
    project = demoProject();
    project.write('.refinery/lock', typeof content === 'string' ? content : content());
    const result = await runCli(['run', 'demo', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    expect(existsSync(project.path('.refinery/lock'))).toBe(false);
  });

  it('project lock - a running holder blocks a run with a message naming it; its pid with another start time does not', async () => {
    project = demoProject();
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const pid = holder.pid as number;
      const start = processStart(pid);
      expect(start).toMatch(/^\d+$/);
      const live = `${JSON.stringify({ pid, start, boot: bootId(), host: os.hostname(), token: 'live' })}\n`;
      project.write('.refinery/lock', live);
      const blocked = await runCli(['run', 'demo'], { cwd: project.root });
      expect(blocked.code).toBe(1);
      expect(blocked.stderr).toContain(`another refinery process (pid ${pid} on ${os.hostname()}) is running in ${project.root}`);
      expect(blocked.stderr).toContain('wait for it or stop it');
      expect(blocked.stdout).toBe('');
      expect(readFileSync(project.path('.refinery/lock'), 'utf8')).toBe(live);
      // The same pid, but not the process that took the lock (the pid was reused).
      project.write(
        '.refinery/lock',
        `${JSON.stringify({ pid, start: String(Number(start) + 1), boot: bootId(), host: os.hostname(), token: 'reused' })}\n`,
      );
      const ran = await runCli(['run', 'demo'], { cwd: project.root });
      expect(ran.code, ran.stderr).toBe(0);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it.each([
    ['no lock file', undefined],
    [
      'a stale lock of pid 1',
      () => `${JSON.stringify({ pid: 1, start: '999999999', boot: bootId(), host: os.hostname(), token: 'stale' })}\n`,
    ],
  ])('project lock - 8 CLI runs started at once never run a stage together: %s', async (_name, stale) => {
    project = tempProject({
      'pipelines/demo.yaml': `pipeline: demo
stages:
  slow:
    run: "echo enter $$ >> trace.log && sleep 0.3 && echo exit $$ >> trace.log && echo done > \${outputs.o}"
    outputs: { o: out/slow.txt }
`,
    });
    if (stale) project.write('.refinery/lock', stale());
    const children = Array.from({ length: WORKERS }, () => startCli(['run', 'demo', '--force'], { cwd: project!.root }));
    const results = await Promise.all(
      children.map(
        (child) =>
          new Promise<CliResult>((resolve) => {
            let stdout = '';
            let stderr = '';
            child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
            child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
            child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
          }),
      ),
    );
    const ran = results.filter((r) => r.code === 0);
    const refused = results.filter((r) => r.code === 1);
    expect(ran.length + refused.length, results.map((r) => r.stderr).join('\n')).toBe(WORKERS);
    expect(ran.length).toBeGreaterThanOrEqual(1);
    for (const r of refused)
      expect(r.stderr).toMatch(/^refinery: another refinery process \(pid \d+ on .*\) is running in .*wait for it or stop it\n$/);
    const trace = readFileSync(project.path('trace.log'), 'utf8').trim().split('\n');
    expect(trace).toHaveLength(ran.length * 2);
    // Strictly enter, exit, enter, exit...: never two runs inside the stage at once.
    trace.forEach((line, i) => expect(line.split(' ')[0]).toBe(i % 2 === 0 ? 'enter' : 'exit'));
    for (let i = 0; i < trace.length; i += 2) expect((trace[i] as string).split(' ')[1]).toBe((trace[i + 1] as string).split(' ')[1]);
    expect(existsSync(project.path('.refinery/lock'))).toBe(false);
  });
});
