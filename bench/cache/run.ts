// Benchmark: the remote cache on a real nginx (WebDAV) on 127.0.0.1. The analyze pipeline over 200
// generated MassGen runs and the offline refine example, each run three ways in one go:
//   cold local  - a fresh clone, no remote cache: everything runs
//   clone A     - a fresh clone, cold, storing its results in the cache
//   clone B     - a fresh clone in another folder, warm cache: everything comes from it
// and the wall time, stages executed and model calls side by side. Cold local and clone B are
// medians of 3 runs, each in a fresh clone.   Run: just bench-cache [runs=200]
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateLogs } from '../../dev/massgen-gen/generate.ts';
import { events, REPO_ROOT, runCli, tempProject, type CliResult, type TempProject } from '../../test/helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS } from '../../test/helpers/refine-example.ts';
import { startNginxCache } from '../../test/helpers/nginx-cache.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '200' }, repeat: { type: 'string', default: '3' } } });
const RUNS = Number(values.runs);
const REPEAT = Number(values.repeat);

const logs = mkdtempSync(path.join(os.tmpdir(), 'refinery-bench-cache-logs-'));
for (let seed = 1; readdirSync(logs).filter((d) => d.startsWith('log_')).length < RUNS; seed++) generateLogs({ outDir: logs, seed });
// Exactly RUNS log dirs: the last seed may have added a few more.
for (const extra of readdirSync(logs)
  .filter((d) => d.startsWith('log_'))
  .sort()
  .slice(RUNS))
  rmSync(path.join(logs, extra), { recursive: true });
const turns = readdirSync(logs)
  .filter((d) => d.startsWith('log_'))
  .reduce((n, d) => n + readdirSync(path.join(logs, d)).filter((t) => t.startsWith('turn_')).length, 0);

function clone(): TempProject {
  const p = tempProject();
  for (const rel of ['refinery.config.yaml', 'pipelines/refine.yaml', 'examples/refine'])
    cpSync(path.join(REPO_ROOT, rel), p.path(rel), { recursive: true });
  cpSync(logs, p.path('.massgen/massgen_logs'), { recursive: true });
  return p;
}

interface Measured {
  ms: number;
  executed: number;
  fromCache: number;
  calls: number;
  costUsd: number;
  uploaded: number;
}

async function measure(p: TempProject, args: string[], env: NodeJS.ProcessEnv): Promise<Measured> {
  const started = performance.now();
  const result: CliResult = await runCli(['run', ...args, '--json', '-j', '2'], { cwd: p.root, env });
  const ms = performance.now() - started;
  if (result.code !== 0) throw new Error(`refinery ${args[0]} failed (${result.code}): ${result.stderr}`);
  const all = events(result.stdout);
  const calls = all.filter(
    (e) =>
      e.type === 'stage-report' &&
      (e.report as { kind: string; cached: boolean }).kind === 'llm-call' &&
      !(e.report as { cached: boolean }).cached,
  );
  const remote = all.find((e) => e.type === 'run-end')?.remote as { stages: number; uploaded: number } | undefined;
  return {
    ms,
    executed: all.filter((e) => e.type === 'stage-start').length,
    fromCache: remote?.stages ?? 0,
    calls: calls.length,
    costUsd: calls.reduce((sum, e) => sum + (e.report as { costUsd: number }).costUsd, 0),
    uploaded: remote?.uploaded ?? 0,
  };
}

const ngx = await startNginxCache({ maxBody: '256m' });
const workloads: Array<{ name: string; args: string[] }> = [
  { name: `analyze, ${RUNS} runs (${turns} turns)`, args: ['analyze'] },
  { name: 'refine example', args: ['refine', ...EXAMPLE_REFINE_PARAMS] },
];
const rows: string[] = [];
const clones: TempProject[] = [];
let requests: ReturnType<typeof ngx.requests> = [];
try {
  const env = { REFINERY_REMOTE_CACHE: ngx.url };
  /** The median of REPEAT runs, each in a fresh clone (this machine is shared: single runs are noisy). */
  const median = async (args: string[], runEnv: NodeJS.ProcessEnv): Promise<Measured> => {
    const runs: Measured[] = [];
    for (let i = 0; i < REPEAT; i++) {
      const fresh = clone();
      runs.push(await measure(fresh, args, runEnv));
      fresh.cleanup();
    }
    return runs.sort((x, y) => x.ms - y.ms)[Math.floor(REPEAT / 2)] as Measured;
  };
  const a = clone();
  clones.push(a);
  for (const w of workloads) {
    const local = await median(w.args, {});
    const writer = await measure(a, w.args, env);
    const warm = await median(w.args, env);
    const cell = (m: Measured) =>
      `${(m.ms / 1000).toFixed(2)} s, ${m.executed} stages run${m.fromCache ? `, ${m.fromCache} from the cache` : ''}, ${m.calls} model calls ($${m.costUsd.toFixed(4)})`;
    rows.push(
      `| ${w.name} | ${cell(local)} | ${cell(writer)}, ${writer.uploaded} stored | ${cell(warm)} | ${(local.ms / warm.ms).toFixed(2)}× |`,
    );
    if (warm.executed !== 0 || warm.calls !== 0)
      throw new Error(`clone B ran ${warm.executed} stages and made ${warm.calls} model calls; expected 0 and 0`);
  }
} finally {
  requests = ngx.requests();
  for (const c of clones) c.cleanup();
  await ngx.dispose();
  rmSync(logs, { recursive: true, force: true });
}
process.stdout.write(
  `remote cache: nginx (WebDAV) on 127.0.0.1, ${requests.length} requests (${requests.filter((r) => r.method === 'PUT').length} PUT); -j 2 on ${os.availableParallelism()} cores; cold and warm: medians of ${REPEAT}\n\n`,
);
process.stdout.write(
  '| workload | cold local (no cache) | clone A: cold, storing | clone B: warm remote | cold / warm |\n| --- | --- | --- | --- | --- |\n',
);
process.stdout.write(`${rows.join('\n')}\n`);
