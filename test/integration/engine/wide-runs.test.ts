// Runs wider than Node's default of ten listeners per signal: every running stage used to hang a
// listener on the run's one AbortSignal, so `refinery run -j 16` printed Node's "possible
// EventTarget memory leak" warning to the user's terminal. Each stage now has a signal of its own.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { events, runCli, startCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const WAIT_TASK = `import { defineTask, z } from 'refinery/task';
import { writeFileSync } from 'node:fs';
export default defineTask({ name: 'wait', params: z.object({ ms: z.number() }), async run(ctx) {
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ctx.params.ms);
    ctx.signal.addEventListener('abort', () => { clearTimeout(timer); reject(new Error('aborted')); }, { once: true });
  });
  writeFileSync(ctx.outputs.o, 'done\\n');
} });
`;

function widePipeline(): string {
  const lines = ['pipeline: wide', 'stages:'];
  for (let i = 0; i < 16; i += 1) lines.push(`  c${i}: { run: "sleep 1; echo ${i} > \${outputs.o}", outputs: { o: out/c${i} } }`);
  for (let i = 0; i < 8; i += 1)
    lines.push(`  t${i}: { run: "sleep 1; echo ${i} > \${outputs.o}", timeout: 60s, outputs: { o: out/t${i} } }`);
  for (let i = 0; i < 8; i += 1) lines.push(`  k${i}: { task: wait, with: { ms: 1000 }, outputs: { o: out/k${i} } }`);
  return `${lines.join('\n')}\n`;
}

/** The most stages running at once, from the run's stage-start and stage-end events in order. */
function mostAtOnce(stdout: string): number {
  let running = 0;
  let most = 0;
  for (const e of events(stdout)) {
    if (e.type === 'stage-start') most = Math.max(most, ++running);
    if (e.type === 'stage-end' && e.status !== 'fresh') running -= 1;
  }
  return most;
}

/** Processes whose command line is exactly `argv` (read from /proc). */
function processesRunning(argv: string[]): number {
  const wanted = `${argv.join('\0')}\0`;
  let count = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === wanted) count += 1;
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}

it('run -j 16 - commands, commands with a timeout and tasks, sixteen at once, print no listener-leak warning', async () => {
  project = tempProject({ 'tasks/wait.ts': WAIT_TASK, 'pipelines/wide.yaml': widePipeline() });
  const result = await runCli(['run', 'wide', '-j', '16', '--json'], { cwd: project.root });
  expect(result.code, result.stderr).toBe(0);
  expect(Object.values(stageEnds(result.stdout)).filter((s) => s === 'succeeded')).toHaveLength(32);
  // Meaningful only if more than ten stages did run at once.
  expect(mostAtOnce(result.stdout)).toBeGreaterThan(10);
  expect(result.stderr).not.toMatch(/MaxListenersExceeded|memory leak/);
});

it('run -j 16 - Ctrl-C stops all sixteen running commands through their own signals, exit 130', async () => {
  const sleeper = ['sleep', '47.25'];
  const lines = ['pipeline: wide', 'stages:'];
  for (let i = 0; i < 16; i += 1)
    lines.push(`  c${i}: { run: "${sleeper.join(' ')}; echo ${i} > \${outputs.o}", outputs: { o: out/c${i} } }`);
  project = tempProject({ 'pipelines/wide.yaml': `${lines.join('\n')}\n` });
  const child = startCli(['run', 'wide', '-j', '16', '--json'], { cwd: project.root });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  // Once every command has started: its sleep is a process of its own, looked for in /proc.
  const allStarted = setInterval(() => {
    if (events(stdout).filter((e) => e.type === 'stage-start').length === 16 && processesRunning(sleeper) === 16) {
      clearInterval(allStarted);
      child.kill('SIGINT');
    }
  }, 20);
  const code = await exited.finally(() => clearInterval(allStarted));
  expect(code, stderr).toBe(130);
  expect(Object.values(stageEnds(stdout))).toEqual(Array(16).fill('aborted'));
  expect(processesRunning(sleeper)).toBe(0);
  expect(stderr).not.toMatch(/MaxListenersExceeded|memory leak/);
});
