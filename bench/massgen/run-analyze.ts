// `refinery run analyze` at the scale MassGen users reach (issue 35: 1,000 log folders), on --runs
// generated runs: the first run (every turn analyzed), a no-op run (budget: 1.0 s, 150 MB RSS), and
// a run after one new run was added (budget: 1.5 s). Times are wall-clock medians of --reps runs of
// the real CLI, with CPU time and the peak RSS of refinery's process; `node -e 0` is timed too, as
// the floor any command pays on this machine at the time.
//   npx tsx bench/massgen/run-analyze.ts [--runs 1000] [--reps 5] [--keep]
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fleetScripts } from '../../dev/massgen-gen/fleet.ts';
import { generateLogs } from '../../dev/massgen-gen/generate.ts';
import { benchArgs, engine, median, medianTimed, ms, REPO, refinery, run, type Timed } from './timing.ts';

const WORK = path.join(REPO, 'bench', '.work', 'massgen-run-analyze');
const NOOP = { ms: 1000, rssMb: 150 };
const ONE_NEW_MS = 1500;

const { runs: RUNS, reps: REPS, keep: KEEP } = benchArgs('bench/massgen/run-analyze.ts');

/** The stage counts of the `done:` line: `25 up to date`, `1 succeeded, 1 fresh`… */
function doneLine(r: Timed): string {
  const line = r.stdout.split('\n').find((l) => l.startsWith('done: '));
  if (!line) throw new Error(`no 'done:' line in: ${r.stdout.slice(-2000)}`);
  return line;
}

const met = (ok: boolean): string => (ok ? 'met' : 'NOT MET');

function main(): void {
  rmSync(WORK, { recursive: true, force: true });
  const project = path.join(WORK, 'project');
  const logs = path.join(project, '.massgen', 'massgen_logs');
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), '{ "private": true }\n');
  console.log(`bench/massgen run analyze: ${RUNS} generated runs, ${REPS} reps, engine: ${engine()}`);
  const t = process.hrtime.bigint();
  const generated = generateLogs({ outDir: logs, seed: 1, scripts: fleetScripts(RUNS) });
  console.log(
    `generated ${generated.logDirs.length} log folders (${generated.files} files) in ${ms(Number(process.hrtime.bigint() - t) / 1e6)}`,
  );

  const first = refinery(project, 'run', 'analyze');
  console.log(`run analyze, first run: ${medianTimed([first], true)}; ${doneLine(first)}`);
  const floor = Array.from({ length: REPS }, () => run(process.execPath, ['-e', '0'], project));
  console.log(`node -e 0: ${medianTimed(floor, true)} (load average ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} cores)`);

  const noop = Array.from({ length: REPS }, () => refinery(project, 'run', 'analyze'));
  for (const r of noop)
    if (!/ up to date in /.test(doneLine(r)) || / succeeded/.test(doneLine(r))) throw new Error(`not a no-op: ${doneLine(r)}`);
  const noopMs = median(noop.map((r) => r.ms));
  const noopMb = median(noop.map((r) => r.rssMb));
  console.log(`run analyze, nothing new: ${medianTimed(noop, true)} (runs: ${noop.map((x) => x.ms.toFixed(0)).join(', ')} ms)`);
  console.log(`target: no-op <= ${NOOP.ms} ms and <= ${NOOP.rssMb} MB: ${met(noopMs <= NOOP.ms && noopMb <= NOOP.rssMb)}`);

  const oneNew: Timed[] = [];
  for (let i = 0; i < REPS; i++) {
    generateLogs({ outDir: logs, seed: 1, scripts: fleetScripts(1, undefined, RUNS + i), firstIndex: RUNS + i });
    const r = refinery(project, 'run', 'analyze');
    // The new run's turns and the summary, nothing else.
    if (!/ succeeded/.test(doneLine(r))) throw new Error(`the new run was not analyzed: ${doneLine(r)}`);
    oneNew.push(r);
  }
  const oneNewMs = median(oneNew.map((r) => r.ms));
  console.log(
    `run analyze after one new run: ${medianTimed(oneNew, true)} (runs: ${oneNew.map((x) => x.ms.toFixed(0)).join(', ')} ms); ${doneLine(oneNew[0] as Timed)}`,
  );
  console.log(`target: one new run <= ${ONE_NEW_MS} ms: ${met(oneNewMs <= ONE_NEW_MS)}`);
  console.log(
    `load average after: ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(', ')}`,
  );
  if (!KEEP) rmSync(WORK, { recursive: true, force: true });
}

main();
