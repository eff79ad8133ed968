// The experiments pipeline on a 4 × 3 grid of a fake MassGen taking 2 s per run, at -j 4:
//   wall time against the ideal (cells / 4 × 2 s, plus what runs before and after the MassGen runs),
//   the longest gap between a running cell's progress events, and an unchanged rerun (its whole
//   process, and how many MassGen processes it started: runs and `massgen --version` alike).
// Run: npx tsx bench/experiments/run.ts   (just bench-experiments)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(REPO, 'bin/refinery.js');
const FAKE = path.join(REPO, 'test/helpers/fake-massgen.mjs');
const CONFIGS = 4;
const QUESTIONS = 3;
const RUN_MS = 2000;
const JOBS = 4;

type Event = { type: string; stage?: string; time: string; status?: string };

function cli(root: string, calls: string): Promise<{ code: number | null; stdout: string; wallMs: number }> {
  const args = [CLI, 'run', 'experiments', '-k', '--json', '-j', String(JOBS), '--param', 'configs=configs/*.yaml'];
  args.push('--param', 'questions=questions.txt', '--param', `massgen=node ${FAKE}`);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', CI: 'true', FAKE_MASSGEN_CALLS: calls },
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', () => undefined);
    child.on('close', (code) => resolve({ code, stdout, wallMs: performance.now() - started }));
  });
}

const root = mkdtempSync(path.join(os.tmpdir(), 'refinery-bench-experiments-'));
try {
  writeFileSync(path.join(root, 'package.json'), '{ "type": "module", "private": true }\n');
  mkdirSync(path.join(root, 'node_modules'));
  symlinkSync(REPO, path.join(root, 'node_modules/refinery'), 'dir');
  mkdirSync(path.join(root, 'configs'));
  for (let i = 1; i <= CONFIGS; i += 1)
    writeFileSync(path.join(root, `configs/c${i}.yaml`), `agents: []\n# fake-massgen: duration_ms=${RUN_MS} tick_ms=500\n`);
  writeFileSync(path.join(root, 'questions.txt'), Array.from({ length: QUESTIONS }, (_, i) => `Question ${i + 1}?`).join('\n'));
  const calls = path.join(root, 'calls.txt');

  const first = await cli(root, calls);
  if (first.code !== 0) throw new Error(`the grid run exited ${first.code}`);
  const events = first.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Event);
  const t = (e: Event) => Date.parse(e.time);
  const runStart = t(events.find((e) => e.type === 'run-start') as Event);
  const runEnd = t(events.find((e) => e.type === 'run-end') as Event);
  const isCell = (e: Event) => e.stage?.startsWith('run[') === true;
  const cellStarts = events.filter((e) => e.type === 'stage-start' && isCell(e));
  const cellEnds = events.filter((e) => e.type === 'stage-end' && isCell(e));
  const before = Math.min(...cellStarts.map(t)) - runStart;
  const after = runEnd - Math.max(...cellEnds.map(t));
  const cells = cellStarts.length;
  const ideal = (cells / JOBS) * RUN_MS + before + after;
  const wall = runEnd - runStart;
  // Longest silence of a running cell: from its start, between progress events, to its end.
  let worstGap = 0;
  let worstCell = '';
  for (const start of cellStarts) {
    const times = events.filter((e) => e.stage === start.stage && (e.type === 'stage-progress' || e.type === 'stage-end')).map(t);
    let last = t(start);
    for (const time of times) {
      if (time - last > worstGap) {
        worstGap = time - last;
        worstCell = start.stage as string;
      }
      last = time;
    }
  }
  const durations = cellEnds.map((e) => (e as Event & { durationMs: number }).durationMs);
  const meanCell = durations.reduce((a, b) => a + b, 0) / durations.length;
  // Every MassGen process the fake saw start: its runs and `massgen --version`.
  const starts = (): number => readFileSync(calls, 'utf8').split('\n').filter(Boolean).length;
  const runsBefore = starts();
  const second = await cli(root, calls);
  const runsAfter = starts();

  const ok = (pass: boolean) => (pass ? 'ok' : 'MISSED');
  const lines = [
    `grid: ${CONFIGS} configs × ${QUESTIONS} questions = ${cells} MassGen runs of ${RUN_MS / 1000} s at -j ${JOBS}`,
    `wall time (run-start → run-end): ${(wall / 1000).toFixed(2)} s; ideal ${(ideal / 1000).toFixed(2)} s = ${cells}/${JOBS} × ${RUN_MS / 1000} s + ${(before / 1000).toFixed(2)} s before the first run (version, configs) + ${(after / 1000).toFixed(2)} s after the last (analyze, summary)`,
    `  ratio ${(wall / ideal).toFixed(3)} (target ≤ 1.15): ${ok(wall <= 1.15 * ideal)}`,
    `progress: longest gap between a running cell's events ${(worstGap / 1000).toFixed(2)} s (${worstCell}) (target ≤ 2.5 s): ${ok(worstGap <= 2500)}`,
    `unchanged rerun: ${(second.wallMs / 1000).toFixed(2)} s for the whole process (target ≤ 1 s): ${ok(second.wallMs <= 1000)}; MassGen processes started (runs and --version): ${runsAfter - runsBefore} (target 0): ${ok(runsAfter === runsBefore)}`,
    `a run stage took ${(meanCell / 1000).toFixed(2)} s on average (the fake's ${RUN_MS / 1000} s, plus node's start and the copy of its log); ${cells}/${JOBS} × that = ${(((cells / JOBS) * meanCell) / 1000).toFixed(2)} s`,
    `first run, whole process: ${(first.wallMs / 1000).toFixed(2)} s`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
