// Benchmark: three judges evaluating in parallel vs one judge alone, against the fake OpenAI-compatible
// server (in its own process) at 300 ms latency per call, measured in the same run; then an identical rerun that must make
// zero backend calls and cost $0; then whole sessions (`refinery run refine`: writer, three judges, votes, guard) against
// schema-following judges (a server that answers within the JSON Schema each call sends): degraded artifacts per
// session (target 0) and first-try valid answers (target 100 %).   Run: npx tsx bench/refine/run.ts
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startServerProcess } from './server-handle.ts';
import { REPO_ROOT, runCli, tempProject } from '../../test/helpers/project.ts';
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
writeFileSync(
  path.join(root, 'refine/criteria.json'),
  JSON.stringify({ criteria: ['Clarity', 'Accuracy', 'Depth', 'Craft'].map((text) => ({ text })) }),
);

function judge(backend: string, deliverable: string, runId: string): Promise<TaskRun> {
  return runTask(
    evaluateBackend,
    { backend, criteria: 'refine/criteria.json', deliverable: [deliverable] },
    {
      root,
      runId,
      stage: `evaluate[${backend}]`,
      outputs: {
        verdict: `out/${runId}/${backend}/verdict.json`,
        critique: `out/${runId}/${backend}/critique_packet.md`,
        next_tasks: `out/${runId}/${backend}/next_tasks.json`,
      },
    },
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const calls = (runs: TaskRun[]) =>
  runs.flatMap((r) => r.reports).filter((r): r is Extract<TaskReport, { kind: 'llm-call' }> => r.kind === 'llm-call');

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
  if (calls([alone.value]).some((c) => c.cached) || calls(three.value).some((c) => c.cached))
    throw new Error('a measured call hit the cache');
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

// Whole sessions against schema-following judges.
const SESSIONS = 3;
const schemaServer = await startServerProcess(LATENCY_MS, 'schema');
const project = tempProject({
  'refinery.config.yaml': `backends:\n${['writer', ...JUDGES].map((j) => `  ${j}: {kind: openai, base_url: "${schemaServer.url}", model: m-${j}, ${price}}`).join('\n')}\n`,
});
cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
const degradedPerSession: number[] = [];
const sessionMs: number[] = [];
let firstTries = 0;
let firstTriesValid = 0;
let sessionFailures = 0;
for (let i = 0; i < SESSIONS; i++) {
  project.write(`doc-${i}/README.md`, `# Tool ${i}\n\nRun \`tool --help\`.\n`);
  project.write(`doc-${i}/previous.md`, `# Tool ${i}\n`);
  const params = {
    session: `s${i}`,
    query: `Write a README for tool ${i}`,
    deliverable: `doc-${i}/README.md`,
    previous: `doc-${i}/previous.md`,
    writer: 'writer',
    judges: JUDGES.join(','),
  };
  const started = performance.now();
  const run = await runCli(['run', 'refine', ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`])], {
    cwd: project.root,
  });
  sessionMs.push(performance.now() - started);
  if (run.code !== 0) {
    sessionFailures += 1;
    process.stderr.write(run.stdout.slice(-2000) + run.stderr);
    continue;
  }
  const summary = JSON.parse(readFileSync(project.path(`.refinery/sessions/s${i}/summary.json`), 'utf8')) as {
    answers: { first_try: number; first_try_valid: number; degraded_artifacts: string[] };
  };
  degradedPerSession.push(summary.answers.degraded_artifacts.length);
  firstTries += summary.answers.first_try;
  firstTriesValid += summary.answers.first_try_valid;
}
await schemaServer.close();
project.cleanup();
const degradedOk = sessionFailures === 0 && degradedPerSession.every((d) => d === 0);
const validShare = firstTries > 0 ? firstTriesValid / firstTries : 0;
const sessionLines = [
  `  schema-following judges  : ${SESSIONS} sessions of \`refinery run refine\` (writer + ${JUDGES.length} judges, votes, guard; response_format strict), ${LATENCY_MS} ms per call`,
  `  session wall time        : ${median(sessionMs).toFixed(0)} ms median   (runs: ${sessionMs.map((x) => x.toFixed(0)).join(', ')})`,
  `  degraded artifacts       : ${degradedPerSession.join(', ') || '-'} per session${sessionFailures ? ` (${sessionFailures} runs failed)` : ''}   (target 0)  ${degradedOk ? 'OK' : 'FAIL'}`,
  `  first-try valid answers  : ${firstTriesValid}/${firstTries} (${(validShare * 100).toFixed(1)} %)   (target 100 %)  ${validShare === 1 ? 'OK' : 'FAIL'}`,
];
process.stdout.write(`${sessionLines.join('\n')}\n`);
if (ratio > MAX_RATIO || backendCalls !== 0 || rerunCost !== 0 || !degradedOk || validShare !== 1) process.exitCode = 1;
