// Benchmark: three judges evaluating in parallel vs one judge alone, against the fake OpenAI-compatible
// server (in its own process) at 300 ms latency per call, measured in the same run; then an identical rerun that must make
// zero backend calls and cost $0.   Run: npx tsx bench/refine/run.ts
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServerProcess } from './server-handle.ts';
import { runTask, type TaskRun } from '../../test/integration/refine/helpers/task-context.ts';
import evaluateBackend from '../../tasks/evaluate-backend.ts';
import type { TaskReport } from '../../src/task/define-task.ts';

const LATENCY_MS = 300;
const ITERATIONS = 7;
const JUDGES = ['judge-1', 'judge-2', 'judge-3'];
const MAX_RATIO = 1.2;

const server = await startServerProcess(LATENCY_MS);
const root = mkdtempSync(path.join(tmpdir(), 'refinery-bench-'));
const price = 'price: {input_per_mtok: 3, output_per_mtok: 15}';
writeFileSync(
  path.join(root, 'refinery.config.yaml'),
  `backends:\n${[...JUDGES, 'solo'].map((j) => `  ${j}: {kind: openai, base_url: "${server.url}", model: m-${j}, ${price}}`).join('\n')}\n`,
);
mkdirSync(path.join(root, 'refine'));
writeFileSync(path.join(root, 'refine/criteria.json'), JSON.stringify({ criteria: ['Clarity', 'Accuracy', 'Depth', 'Craft'].map((text) => ({ text })) }));

function judge(backend: string, deliverable: string, runId: string): Promise<TaskRun> {
  return runTask(
    evaluateBackend,
    { backend, criteria: 'refine/criteria.json', deliverable: [deliverable] },
    {
      root,
      runId,
      stage: `evaluate[${backend}]`,
      outputs: { verdict: `out/${runId}/${backend}/verdict.json`, critique: `out/${runId}/${backend}/critique_packet.md`, next_tasks: `out/${runId}/${backend}/next_tasks.json` },
    },
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const calls = (runs: TaskRun[]) => runs.flatMap((r) => r.reports).filter((r): r is Extract<TaskReport, { kind: 'llm-call' }> => r.kind === 'llm-call');

// Warm-up (module loading, schema compilation) outside the measurement.
writeFileSync(path.join(root, 'warm.md'), '# warm-up\n');
await judge('solo', 'warm.md', 'warm');

const single: number[] = [];
const panel: number[] = [];
let lastPanel: { file: string; runId: string } | undefined;
let lastPanelRuns: TaskRun[] = [];
for (let i = 0; i < ITERATIONS; i++) {
  // A fresh deliverable per iteration, so every measured call misses the cache.
  const file = `deliverable-${i}.md`;
  writeFileSync(path.join(root, file), `# Deliverable ${i}\n\nSome text to evaluate.\n`);
  const alone = await timed(() => judge('solo', file, `single-${i}`));
  const three = await timed(() => Promise.all(JUDGES.map((j) => judge(j, file, `panel-${i}`))));
  if (calls([alone.value]).some((c) => c.cached) || calls(three.value).some((c) => c.cached)) throw new Error('a measured call hit the cache');
  single.push(alone.ms);
  panel.push(three.ms);
  lastPanel = { file, runId: `panel-${i}` };
  lastPanelRuns = three.value;
}

const requestsBefore = await server.requestCount();
const rerun = await Promise.all(JUDGES.map((j) => judge(j, lastPanel?.file ?? '', 'rerun')));
const rerunCalls = calls(rerun);
const backendCalls = (await server.requestCount()) - requestsBefore;
const rerunCost = rerunCalls.reduce((sum, c) => sum + c.costUsd, 0);
const firstRunCost = calls(lastPanelRuns).reduce((sum, c) => sum + c.costUsd, 0);

const ratio = median(panel) / median(single);
const lines = [
  `refine bench: fake OpenAI-compatible server on 127.0.0.1, ${LATENCY_MS} ms per call, ${ITERATIONS} iterations (median)`,
  `  one judge alone          : ${median(single).toFixed(0)} ms   (runs: ${single.map((x) => x.toFixed(0)).join(', ')})`,
  `  three judges in parallel : ${median(panel).toFixed(0)} ms   (runs: ${panel.map((x) => x.toFixed(0)).join(', ')})`,
  `  ratio three/one          : ${ratio.toFixed(3)}   (limit ${MAX_RATIO})  ${ratio <= MAX_RATIO ? 'OK' : 'FAIL'}`,
  `  first run of that round  : ${calls(lastPanelRuns).length} backend calls, $${firstRunCost.toFixed(6)}`,
  `  identical rerun          : ${backendCalls} backend calls, ${rerunCalls.length} cached answers, $${rerunCost.toFixed(6)}  ${backendCalls === 0 && rerunCost === 0 && rerunCalls.every((c) => c.cached) ? 'OK' : 'FAIL'}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
await server.close();
rmSync(root, { recursive: true, force: true });
if (ratio > MAX_RATIO || backendCalls !== 0 || rerunCost !== 0) process.exitCode = 1;
