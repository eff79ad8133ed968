// Benchmark: analyze-turn vs a naive line-by-line JSON.parse of the same events.jsonl.
//   npx tsx bench/analyze/run.ts [--gb 1] [--keep]
// Generates a synthetic MassGen run whose events.jsonl is padded to --gb GB (bench/.work/,
// gitignored), then runs each workload in its own child process so peak RSS is per process
// (GNU /usr/bin/time -v when present, else the child's own process.resourceUsage().maxRSS).
import { execFile } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { generateLogs } from '../../dev/massgen-gen/generate.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '../..');
const WORK = join(REPO, 'bench/.work/analyze');
const TIME = '/usr/bin/time';

interface Measured {
  mode: string;
  ms: number;
  rssMb: number;
  rssSource: string;
  result: Record<string, unknown>;
}

async function measure(mode: 'analyze' | 'naive', target: string): Promise<Measured> {
  const child = [process.execPath, '--import', 'tsx', join(import.meta.dirname, 'child.ts'), mode, target];
  const useTime = existsSync(TIME);
  const [cmd, ...args] = useTime ? [TIME, '-v', ...child] : child;
  const { stdout, stderr } = await run(cmd ?? process.execPath, args, { cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
  const line = stdout.trim().split('\n').pop() ?? '';
  const report = JSON.parse(line) as { mode: string; ms: number; maxRssKb: number; result: Record<string, unknown> };
  const timed = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
  const kb = timed ? Number(timed[1]) : report.maxRssKb;
  return { mode, ms: report.ms, rssMb: kb / 1024, rssSource: timed ? '/usr/bin/time -v' : 'process.resourceUsage', result: report.result };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { gb: { type: 'string', default: '1' }, keep: { type: 'boolean', default: false } } });
  const gb = Number(values.gb);
  if (!Number.isFinite(gb) || gb <= 0 || gb > 64) throw new Error(`--gb '${values.gb}' must be a number in (0, 64]`);
  rmSync(WORK, { recursive: true, force: true });
  const t0 = performance.now();
  const gen = generateLogs({ outDir: WORK, seed: 1, scenarios: ['consensus'], eventsBytes: Math.round(gb * 1e9) });
  const genSecs = (performance.now() - t0) / 1000;
  const turnDir = join(WORK, gen.logDirs[0] ?? '', 'turn_1');
  const events = join(turnDir, 'attempt_1', 'events.jsonl');
  const bytes = statSync(events).size;
  const mb = bytes / 1e6;
  console.log(`generated ${mb.toFixed(1)} MB events.jsonl in ${genSecs.toFixed(1)}s (${(mb / genSecs).toFixed(0)} MB/s) -> ${events}`);
  const naive = await measure('naive', events);
  const analyze = await measure('analyze', turnDir);
  const rows = [analyze, naive].map((m) => ({
    workload: m.mode === 'analyze' ? 'analyze-turn (src/massgen)' : 'naive readline + JSON.parse',
    seconds: (m.ms / 1000).toFixed(2),
    'MB/s': (mb / (m.ms / 1000)).toFixed(1),
    'peak RSS MB': m.rssMb.toFixed(0),
    result: JSON.stringify(m.result),
  }));
  console.table(rows);
  console.log(
    `throughput ratio analyze/naive: ${(naive.ms / analyze.ms).toFixed(2)}x   peak RSS ratio analyze/naive: ${(analyze.rssMb / naive.rssMb).toFixed(2)}x   (RSS via ${analyze.rssSource})`,
  );
  if (!values.keep) rmSync(WORK, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
