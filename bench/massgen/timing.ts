// Timing the real CLI for the MassGen benches: wall clock, and through GNU time the command's CPU
// time and peak RSS. On a machine shared with other work, wall-clock times rise with the load
// while CPU time stays close to what the command costs.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(REPO, 'bin', 'refinery.js');

export interface Timed {
  ms: number;
  /** User + system CPU time of the command (GNU time), or NaN without it. */
  cpuMs: number;
  /** Peak resident set of the command's own process in MB (GNU time), or NaN without it. */
  rssMb: number;
  stdout: string;
  stderr: string;
}

const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const CPU_MARK = '@@cpu';

export function run(cmd: string, args: string[], cwd: string): Timed {
  const [bin, argv] = GNU_TIME ? [GNU_TIME, ['-f', `${CPU_MARK} %U %S %M`, cmd, ...args]] : [cmd, args];
  const start = process.hrtime.bigint();
  const r = spawnSync(bin, argv, { cwd, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const cpu = new RegExp(`${CPU_MARK} ([\\d.]+) ([\\d.]+) (\\d+)\\s*$`).exec(r.stderr);
  return {
    ms,
    cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : Number.NaN,
    rssMb: cpu ? Number(cpu[3]) / 1024 : Number.NaN,
    stdout: r.stdout,
    stderr: cpu ? r.stderr.slice(0, cpu.index) : r.stderr,
  };
}

export const refinery = (cwd: string, ...args: string[]): Timed => run(process.execPath, [CLI, ...args], cwd);
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
export const ms = (x: number): string => `${x.toFixed(0)} ms`;

/** Median wall clock of several runs, with the median CPU time (and peak RSS when asked) beside it. */
export function medianTimed(runs: Timed[], rss = false): string {
  const cpu = median(runs.map((r) => r.cpuMs));
  const mb = median(runs.map((r) => r.rssMb));
  const extra = [Number.isNaN(cpu) ? '' : `cpu ${ms(cpu)}`, rss && !Number.isNaN(mb) ? `${mb.toFixed(0)} MB RSS` : ''].filter(Boolean);
  return `${ms(median(runs.map((r) => r.ms)))}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}

function newestTs(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestTs(full));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** Which engine bin/refinery.js runs: compiled dist/ or the sources through tsx. */
export function engine(): string {
  const stamp = path.join(REPO, 'dist', '.stamp');
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
  // As bin/refinery.js decides: dist/ runs when it is as new as src/ and tasks/.
  const fresh = !process.env.REFINERY_FROM_SOURCE && built > 0 && ['src', 'tasks'].every((dir) => built >= newestTs(path.join(REPO, dir)));
  return fresh
    ? 'compiled dist/'
    : 'sources through tsx (dist/ missing or older than src/ or tasks/: run `npm run build` first for start-up as installed)';
}

/** `--runs N --reps N [--keep]`, the MassGen benches' arguments; a usage line and exit 2 when they are off. */
export function benchArgs(script: string): { runs: number; reps: number; keep: boolean } {
  const { values } = parseArgs({
    options: { runs: { type: 'string', default: '1000' }, reps: { type: 'string', default: '5' }, keep: { type: 'boolean' } },
  });
  const runs = Number(values.runs);
  const reps = Number(values.reps);
  if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(reps) || reps < 1) {
    console.error(`usage: npx tsx ${script} [--runs N] [--reps N] [--keep]`);
    process.exit(2);
  }
  return { runs, reps, keep: values.keep === true };
}
