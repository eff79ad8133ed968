// refinery against another build of itself: the cold no-op and the one-source touch of the many-sources
// DAG, the two builds interleaved run by run so both see the same load (a machine shared with other
// work). Each build is timed from its dist/ (run `npm run build` in both first).
// Usage: npx tsx bench/graph/ab.ts BASE_REPO NEW_REPO N[,N] REPS
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeManySourcesDag, refineryPipeline, resetDir, writeSources } from './generate.ts';

const [base, next, sizes, repsText] = process.argv.slice(2) as [string, string, string, string];
const reps = Number(repsText);
const env = { ...process.env, REFINERY_FROM_DIST: '1', NO_COLOR: '1' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

function time(dir: string, repo: string): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(path.join(repo, 'bin', 'refinery.js'), ['run', 'graph', '-j2'], { cwd: dir, env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${repo}: exit ${r.status} in ${dir}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

for (const n of sizes.split(',').map(Number)) {
  const dag = makeManySourcesDag(n);
  const dirs: Record<string, string> = {};
  for (const [name, repo] of [
    ['base', base],
    ['new', next],
  ] as const) {
    const dir = path.join(os.tmpdir(), 'refinery-ab', `${name}-${n}`);
    resetDir(dir);
    writeSources(dir, dag);
    mkdirSync(path.join(dir, 'out'), { recursive: true });
    mkdirSync(path.join(dir, 'pipelines'));
    writeFileSync(path.join(dir, 'pipelines', 'graph.yaml'), refineryPipeline(dag, 'run'));
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(repo, path.join(dir, 'node_modules', 'refinery'), 'dir');
    const full = time(dir, repo);
    // Two no-ops after the build: the first leaves the records the next ones use.
    time(dir, repo);
    time(dir, repo);
    dirs[name] = dir;
    console.log(`N=${n} ${name}: full build ${full.toFixed(0)} ms`);
  }
  const noop: Record<string, number[]> = { base: [], new: [] };
  const touch: Record<string, number[]> = { base: [], new: [] };
  for (let r = 0; r < reps; r += 1)
    for (const [name, repo] of [
      ['base', base],
      ['new', next],
    ] as const)
      noop[name]?.push(time(dirs[name] as string, repo));
  for (let r = 0; r < reps; r += 1)
    for (const [name, repo] of [
      ['base', base],
      ['new', next],
    ] as const) {
      appendFileSync(path.join(dirs[name] as string, dag.touched), `edit ${r}\n`);
      touch[name]?.push(time(dirs[name] as string, repo));
    }
  for (const name of ['base', 'new'])
    console.log(
      `N=${n} ${name}: no-op median ${median(noop[name] as number[]).toFixed(0)} ms [${noop[name]?.map((x) => x.toFixed(0)).join(' ')}], touch median ${median(touch[name] as number[]).toFixed(0)} ms [${touch[name]?.map((x) => x.toFixed(0)).join(' ')}]`,
    );
}
