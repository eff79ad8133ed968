// Benchmark: `refinery run --workers` on a real mosquitto and nginx on 127.0.0.1. 120 stages that
// each sleep 0.5 s (a stand-in for model-bound work), run two ways:
//   local    - one `refinery run -j 2`, no workers, no remote cache
//   workers  - a coordinator with no local slots and 3 `refinery worker -j 2` in their own clones
// It prints both wall times, the speed-up (target >= 2.5x) and the dispatch overhead per stage
// (the coordinator's time for a stage minus its run and its wait for a slot while every slot was
// taken, in the coordinator or a worker: signing, the broker's hops, storing inputs, the worker's
// upload, fetching the result, and any time a free slot stood idle for it; target p50 <= 15 ms).
//   Run: just bench-workers [stages=120]
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { events, runCli, type TempProject } from '../../test/helpers/project.ts';
import { startMosquitto } from '../../test/helpers/mosquitto.ts';
import { startNginxCache } from '../../test/helpers/nginx-cache.ts';
import { projectClone, spawnCli, startWorker, uniqueProject, type Proc } from '../../test/integration/workers/harness.ts';

const { values } = parseArgs({ options: { stages: { type: 'string', default: '120' }, workers: { type: 'string', default: '3' } } });
const STAGES = Number(values.stages);
const WORKERS = Number(values.workers);

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
  const local = projectClone(project, { sleepy: pipeline });
  clones.push(local);
  let started = performance.now();
  const cpuBefore = endedChildrenCpu();
  const alone = await runCli(['run', 'sleepy', '--json', '-j', '2'], { cwd: local.root, env: { REFINERY_REMOTE_CACHE: '' } });
  const localMs = performance.now() - started;
  const localCpu = cpuDelta(cpuBefore);
  if (alone.code !== 0) throw new Error(`the local run failed: ${alone.stderr}`);

  for (let i = 1; i <= WORKERS; i++) {
    const c = projectClone(project, { sleepy: pipeline });
    clones.push(c);
    workers.push(await startWorker(c, `w${i}`, broker.url, cache.url));
  }
  const here = projectClone(project, { sleepy: pipeline });
  clones.push(here);
  started = performance.now();
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
  console.log(`  local run -j 2:                      ${(localMs / 1000).toFixed(2)} s`);
  console.log(
    `  coordinator + ${WORKERS} workers at -j 2:     ${(workersMs / 1000).toFixed(2)} s  (${[...byWorker].map(([w, n]) => `${w}: ${n}`).join(', ')})`,
  );
  console.log(`  speed-up:                            ${speedUp.toFixed(2)}x  (target >= 2.5x)  ${speedUp >= 2.5 ? 'ok' : 'MISSED'}`);
  console.log(`  load average (1 min) at the end:     ${os.loadavg()[0]?.toFixed(2)} on ${os.availableParallelism()} cores`);
  if (localCpu !== undefined && coordinatorCpu !== undefined) {
    // The workers' own CPU is added once they have stopped (below).
    workersCpuBefore = endedChildrenCpu();
    cpuLine = (workersCpu) =>
      `  CPU (user + system, whole trees):    local run ${localCpu.toFixed(2)} s; coordinator ${coordinatorCpu.toFixed(2)} s + ${WORKERS} workers ${workersCpu.toFixed(2)} s`;
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
