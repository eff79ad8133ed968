// Benchmark: `refinery run --workers` on a real mosquitto and nginx on 127.0.0.1. 120 stages that
// each sleep 0.5 s (a stand-in for model-bound work), run two ways:
//   local    - one `refinery run -j 2`, no workers, no remote cache
//   workers  - a coordinator with no local slots and 3 `refinery worker -j 2` in their own clones
// It prints both wall times, the speed-up (target >= 2.5x) and the dispatch overhead per stage
// (the coordinator's time for a stage minus its run and its wait for a slot while every slot was
// taken, in the coordinator or a worker: signing, the broker's hops, storing inputs, the worker's
// upload, fetching the result, and any time a free slot stood idle for it; target p50 <= 15 ms).
//   Run: just bench-workers [stages=120]
//   --no-local skips the local run (for quick before/after comparisons of the dispatch side).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { events, REPO_ROOT, runCli, type TempProject } from '../../test/helpers/project.ts';
import { startMosquitto } from '../../test/helpers/mosquitto.ts';
import { startNginxCache } from '../../test/helpers/nginx-cache.ts';
import { projectClone, spawnCli, startWorker, uniqueProject, type Proc } from '../../test/integration/workers/harness.ts';

const { values } = parseArgs({
  options: {
    stages: { type: 'string', default: '120' },
    workers: { type: 'string', default: '3' },
    'no-local': { type: 'boolean', default: false },
  },
});
const STAGES = Number(values.stages);
const WORKERS = Number(values.workers);
const LOCAL = !values['no-local'];

/** Which engine bin/refinery.js runs: dist when its stamp is newer than every source (or REFINERY_FROM_DIST), else the sources through tsx. */
function engine(): string {
  const stamp = path.join(REPO_ROOT, 'dist', '.stamp');
  if (process.env.REFINERY_FROM_SOURCE || !existsSync(stamp)) return 'src (tsx)';
  if (process.env.REFINERY_FROM_DIST) return 'dist (REFINERY_FROM_DIST)';
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(path.join(dir, e.name)) : e.name.endsWith('.ts') ? statSync(path.join(dir, e.name)).mtimeMs : 0,
      ),
    );
  return statSync(stamp).mtimeMs >= newest(path.join(REPO_ROOT, 'src')) ? 'dist' : 'src (tsx): dist is older than src, run npm run build';
}

const pipeline = `pipeline: sleepy
stages:
  nap:
    foreach: [${Array.from({ length: STAGES }, (_, i) => i + 1).join(', ')}]
    run: ": @P@ && sleep 0.5 && echo nap \${item} > \${outputs.o}"
    outputs: { o: "out/nap-\${item}.txt" }
`;

/**
 * CPU seconds (user + system) of this process's children that have ended, whole trees (Linux
 * /proc, 100 ticks a second): less swayed by other jobs on a shared machine than wall time.
 */
function endedChildrenCpu(): number | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  // cutime and cstime: fields 16 and 17 of stat(5), 14 and 15 after the command name.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function cpuDelta(before: number | undefined): number | undefined {
  const now = endedChildrenCpu();
  return before === undefined || now === undefined ? undefined : now - before;
}

let workersCpuBefore: number | undefined;
let cpuLine: ((workersCpu: number) => string) | undefined;
const broker = await startMosquitto();
const cache = await startNginxCache();
const project = uniqueProject();
const clones: TempProject[] = [];
const workers: Proc[] = [];
try {
  console.log(`engine: ${engine()}`);
  let localMs = Number.NaN;
  let localCpu: number | undefined;
  if (LOCAL) {
    const local = projectClone(project, { sleepy: pipeline });
    clones.push(local);
    const localStarted = performance.now();
    const cpuBefore = endedChildrenCpu();
    const alone = await runCli(['run', 'sleepy', '--json', '-j', '2'], { cwd: local.root, env: { REFINERY_REMOTE_CACHE: '' } });
    localMs = performance.now() - localStarted;
    localCpu = cpuDelta(cpuBefore);
    if (alone.code !== 0) throw new Error(`the local run failed: ${alone.stderr}`);
  }

  for (let i = 1; i <= WORKERS; i++) {
    const c = projectClone(project, { sleepy: pipeline });
    clones.push(c);
    workers.push(await startWorker(c, `w${i}`, broker.url, cache.url));
  }
  const here = projectClone(project, { sleepy: pipeline });
  clones.push(here);
  const started = performance.now();
  const coordinatorCpuBefore = endedChildrenCpu();
  const coordinator = spawnCli(['run', 'sleepy', '--json', '--workers', broker.url, '--remote-cache', cache.url], here.root);
  const result = await coordinator.exited;
  const workersMs = performance.now() - started;
  const coordinatorCpu = cpuDelta(coordinatorCpuBefore);
  if (result.code !== 0) throw new Error(`the run with workers failed: ${result.stderr}`);
  const all = events(result.stdout);
  const ends = all.filter((e) => e.type === 'stage-end');
  const byWorker = new Map<string, number>();
  for (const e of ends) byWorker.set(String(e.worker), (byWorker.get(String(e.worker)) ?? 0) + 1);
  const overhead = all
    .filter((e) => e.type === 'stage-report' && (e.report as { name?: string }).name === 'dispatch-overhead')
    .map((e) => (e.report as { value: number }).value)
    .sort((a, b) => a - b);
  const speedUp = localMs / workersMs;
  const p50 = percentile(overhead, 50);
  console.log(`${STAGES} stages of sleep 0.5 s`);
  console.log(`  local run -j 2:                      ${LOCAL ? `${(localMs / 1000).toFixed(2)} s` : 'skipped (--no-local)'}`);
  console.log(
    `  coordinator + ${WORKERS} workers at -j 2:     ${(workersMs / 1000).toFixed(2)} s  (${[...byWorker].map(([w, n]) => `${w}: ${n}`).join(', ')})`,
  );
  if (LOCAL)
    console.log(`  speed-up:                            ${speedUp.toFixed(2)}x  (target >= 2.5x)  ${speedUp >= 2.5 ? 'ok' : 'MISSED'}`);
  console.log(`  load average (1 min) at the end:     ${os.loadavg()[0]?.toFixed(2)} on ${os.availableParallelism()} cores`);
  if (coordinatorCpu !== undefined) {
    // The workers' own CPU is added once they have stopped (below).
    workersCpuBefore = endedChildrenCpu();
    cpuLine = (workersCpu) =>
      `  CPU (user + system, whole trees):    local run ${localCpu === undefined ? '-' : `${localCpu.toFixed(2)} s`}; coordinator ${coordinatorCpu.toFixed(2)} s + ${WORKERS} workers ${workersCpu.toFixed(2)} s`;
  }
  console.log(
    `  dispatch overhead per stage:         p50 ${p50.toFixed(1)} ms, p90 ${percentile(overhead, 90).toFixed(1)} ms, max ${(overhead.at(-1) ?? 0).toFixed(1)} ms over ${overhead.length} stages  (target p50 <= 15 ms)  ${p50 <= 15 ? 'ok' : 'MISSED'}`,
  );
} finally {
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  const workersCpu = cpuDelta(workersCpuBefore);
  if (cpuLine && workersCpu !== undefined) console.log(cpuLine(workersCpu));
  for (const c of clones) c.cleanup();
  await broker.dispose();
  await cache.dispose();
}
