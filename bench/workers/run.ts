// Benchmark: `refinery run --workers` on a real mosquitto and nginx on 127.0.0.1. 120 stages that
// each sleep 0.5 s (a stand-in for model-bound work), run two ways:
//   local    - one `refinery run -j 2`, no workers, no remote cache
//   workers  - a coordinator with no local slots and 3 `refinery worker -j 2` in their own clones
// It prints both wall times, the speed-up (target >= 2.5x) and the dispatch overhead per stage
// (the coordinator's time for a stage minus the time it waited in a worker for a slot and ran
// there: signing, the broker's hops, storing inputs and fetching the result; target p50 <= 15 ms).
//   Run: just bench-workers [stages=120]
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

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const broker = await startMosquitto();
const cache = await startNginxCache();
const project = uniqueProject();
const clones: TempProject[] = [];
const workers: Proc[] = [];
try {
  const local = projectClone(project, { sleepy: pipeline });
  clones.push(local);
  let started = performance.now();
  const alone = await runCli(['run', 'sleepy', '--json', '-j', '2'], { cwd: local.root, env: { REFINERY_REMOTE_CACHE: '' } });
  const localMs = performance.now() - started;
  if (alone.code !== 0) throw new Error(`the local run failed: ${alone.stderr}`);

  for (let i = 1; i <= WORKERS; i++) {
    const c = projectClone(project, { sleepy: pipeline });
    clones.push(c);
    workers.push(await startWorker(c, `w${i}`, broker.url, cache.url));
  }
  const here = projectClone(project, { sleepy: pipeline });
  clones.push(here);
  started = performance.now();
  const coordinator = spawnCli(['run', 'sleepy', '--json', '--workers', broker.url, '--remote-cache', cache.url], here.root);
  const result = await coordinator.exited;
  const workersMs = performance.now() - started;
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
  console.log(
    `  dispatch overhead per stage:         p50 ${p50.toFixed(1)} ms, p90 ${percentile(overhead, 90).toFixed(1)} ms, max ${(overhead.at(-1) ?? 0).toFixed(1)} ms over ${overhead.length} stages  (target p50 <= 15 ms)  ${p50 <= 15 ? 'ok' : 'MISSED'}`,
  );
} finally {
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  for (const c of clones) c.cleanup();
  await broker.dispose();
  await cache.dispose();
}
