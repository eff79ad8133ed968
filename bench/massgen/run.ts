// MassGen across runs, on --runs generated runs (default 1,000; about a week of runs on 3 models):
//   - `refinery logs summary` the first time (every turn analyzed, every analysis read), then after
//     one new run (target: under 0.5 s), and with nothing new;
//   - `refinery logs list` over every run against a plain Python loop that reads each run's
//     status.json (a stand-in for `massgen logs list`), before and after the runs are analyzed.
// Times are wall-clock medians of --reps runs of the real CLI; `node -e 0` is timed too, as the
// floor any command pays on this machine at the time.
//   npx tsx bench/massgen/run.ts [--runs 1000] [--reps 5] [--keep]
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateLogs } from '../../dev/massgen-gen/generate.ts';
import { fleetScripts } from '../../dev/massgen-gen/fleet.ts';
import { benchArgs, engine, median, medianTimed, ms, REPO, refinery, run, type Timed } from './timing.ts';

const WORK = path.join(REPO, 'bench', '.work', 'massgen');
const TARGET_MS = 500;

const { runs: RUNS, reps: REPS, keep: KEEP } = benchArgs('bench/massgen/run.ts');

const PYTHON_LIST = `
import json, os, sys
root = sys.argv[1]
rows = 0
for name in sorted(os.listdir(root), reverse=True):
    session = os.path.join(root, name)
    if not name.startswith('log_') or not os.path.isdir(session):
        continue
    for turn in sorted(os.listdir(session)):
        if not turn.startswith('turn_'):
            continue
        for attempt in sorted(os.listdir(os.path.join(session, turn))):
            status = os.path.join(session, turn, attempt, 'status.json')
            if attempt.startswith('attempt_') and os.path.isfile(status):
                with open(status) as f:
                    json.load(f)
                rows += 1
print(rows)
`;

const reps = (f: () => Timed): Timed[] => Array.from({ length: REPS }, f);

function main(): void {
  rmSync(WORK, { recursive: true, force: true });
  const project = path.join(WORK, 'project');
  const logs = path.join(project, '.massgen', 'massgen_logs');
  mkdirSync(project, { recursive: true });
  writeFileSync(path.join(project, 'package.json'), '{ "private": true }\n');
  console.log(`bench/massgen: ${RUNS} generated runs, ${REPS} reps, engine: ${engine()}`);
  const t = process.hrtime.bigint();
  const generated = generateLogs({ outDir: logs, seed: 1, scripts: fleetScripts(RUNS) });
  console.log(
    `generated ${generated.logDirs.length} log folders (${generated.files} files) in ${ms(Number(process.hrtime.bigint() - t) / 1e6)}`,
  );
  const floor = reps(() => run(process.execPath, ['-e', '0'], project));
  console.log(
    `node -e 0: ${medianTimed(floor)} (start-up floor at this moment; load average ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} cores)`,
  );

  const python = (): Timed => run('python3', ['-c', PYTHON_LIST, logs], project);
  const list = (): Timed => refinery(project, 'logs', 'list', '--limit', String(RUNS + REPS + 1), '--json');
  const rows = (JSON.parse(list().stdout) as unknown[]).length;
  const listCold = reps(list);
  const pyCold = reps(python);
  const ratio = (a: Timed[], b: Timed[]): string => (median(a.map((x) => x.ms)) / median(b.map((x) => x.ms))).toFixed(1);
  console.log(
    `logs list, ${rows} runs, none analyzed: refinery ${medianTimed(listCold)}, python status.json loop ${medianTimed(pyCold)}, ratio ${ratio(listCold, pyCold)}x`,
  );

  const first = refinery(project, 'logs', 'summary');
  console.log(`logs summary, first run: ${medianTimed([first])} (${first.stderr.trim()})`);

  const incremental: Timed[] = [];
  for (let i = 0; i < REPS; i++) {
    const [added] = generateLogs({ outDir: logs, seed: 1, scripts: fleetScripts(1, undefined, RUNS + i), firstIndex: RUNS + i })
      .logDirs as [string];
    const turns = readdirSync(path.join(logs, added)).filter((d) => /^turn_\d+$/.test(d)).length;
    const r = refinery(project, 'logs', 'summary');
    if (!new RegExp(`analyzed ${turns} turn\\(s\\)`).test(r.stderr))
      throw new Error(`expected the new run's ${turns} turn(s) analyzed, got: ${r.stderr}`);
    incremental.push(r);
  }
  const unchanged = reps(() => refinery(project, 'logs', 'summary'));
  const inc = median(incremental.map((r) => r.ms));
  console.log(
    `logs summary after one new run: median ${medianTimed(incremental)} (runs: ${incremental.map((x) => x.ms.toFixed(0)).join(', ')} ms); nothing new: ${medianTimed(unchanged)}`,
  );
  console.log(`target: incremental under ${TARGET_MS} ms: ${inc < TARGET_MS ? 'met' : 'NOT MET'} (wall clock)`);

  const listWarm = reps(list);
  const pyWarm = reps(python);
  console.log(
    `logs list, ${RUNS + REPS} runs, all analyzed (every file of every turn checked against its report): refinery ${medianTimed(listWarm)}, python status.json loop ${medianTimed(pyWarm)}, ratio ${ratio(listWarm, pyWarm)}x`,
  );
  if (!KEEP) rmSync(WORK, { recursive: true, force: true });
}

main();
