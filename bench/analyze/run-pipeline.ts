// Benchmark: `refinery run analyze` on a turn whose events.jsonl is --gb GB, peak RSS of the
// whole process tree (refinery, and any child such as tsx's esbuild) against --limit-mb.
//   npx tsx bench/analyze/run-pipeline.ts [--gb 1] [--limit-mb 256] [--pad-json-mb 0] [--keep]
// --pad-json-mb N grows the turn's status.json and coordination_events.json to N MB each (many
// small objects, the costliest JSON to parse): over the analyzer's limit they are skipped.
// The project is generated in the OS temp dir and removed afterwards (unless --keep). Memory is
// read from /proc every 25 ms: each process's VmHWM (its own peak, so no spike is missed) summed
// over every process of the tree, an upper bound of the tree's peak; also the sampled sum of
// VmRSS and, where GNU time exists, its maximum resident set size (largest single process).
// Exits 1 when the tree's peak is over the limit or the run fails.
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateLogs } from '../../dev/massgen-gen/generate.ts';

const REPO = join(import.meta.dirname, '../..');
const TIME = '/usr/bin/time';

interface TreeMemory {
  /** pid -> highest VmHWM seen (kB). */
  peaks: Map<number, number>;
  /** Highest sum of VmRSS over the tree at one sample (kB). */
  sampledSumKb: number;
}

function statusField(pid: number, field: string): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function parentOf(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The root and every live descendant. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const parent = parentOf(pid);
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

function sample(root: number, memory: TreeMemory): void {
  let sum = 0;
  for (const pid of tree(root)) {
    const rss = statusField(pid, 'VmRSS');
    const hwm = statusField(pid, 'VmHWM');
    if (rss !== undefined) sum += rss;
    if (hwm !== undefined && hwm > (memory.peaks.get(pid) ?? 0)) memory.peaks.set(pid, hwm);
  }
  memory.sampledSumKb = Math.max(memory.sampledSumKb, sum);
}

interface Measured {
  seconds: number;
  code: number | null;
  stdout: string;
  treePeakMb: number;
  sampledSumMb: number;
  timeMaxMb: number | null;
  processes: number;
}

function measure(project: string): Promise<Measured> {
  const cli = [process.execPath, join(REPO, 'bin/refinery.js'), 'run', 'analyze', '--param', 'logs=logs', '--json'];
  const useTime = existsSync(TIME);
  const [cmd, ...args] = useTime ? [TIME, '-v', ...cli] : cli;
  const started = performance.now();
  const child = spawn(cmd as string, args, {
    cwd: project,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', CI: 'true' },
  });
  const memory: TreeMemory = { peaks: new Map(), sampledSumKb: 0 };
  const timer = setInterval(() => child.pid !== undefined && sample(child.pid, memory), 25);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(timer);
      const timed = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      if (code !== 0) process.stderr.write(stderr.split('\n').slice(-20).join('\n'));
      const peakKb = [...memory.peaks.values()].reduce((a, b) => a + b, 0);
      resolve({
        seconds: (performance.now() - started) / 1000,
        code,
        stdout,
        treePeakMb: peakKb / 1024,
        sampledSumMb: memory.sampledSumKb / 1024,
        timeMaxMb: timed ? Number(timed[1]) / 1024 : null,
        processes: memory.peaks.size,
      });
    });
  });
}

/** Adds an array of small objects to a JSON object file until it is about `bytes` long. */
function padJson(file: string, bytes: number): number {
  const value = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const item = (i: number) => ({
    timestamp: 1_700_000_000 + i,
    event_type: 'padding',
    agent_id: `agent_${i % 5}`,
    details: 'y'.repeat(20),
    context: { round: i % 7 },
  });
  const count = Math.ceil(bytes / (JSON.stringify(item(1_000_000)).length + 1));
  writeFileSync(file, JSON.stringify({ ...value, padding: Array.from({ length: count }, (_, i) => item(i)) }));
  return statSync(file).size;
}

function stageStatuses(stdout: string): string {
  const counts = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as { type?: string; status?: string };
    if (e.type === 'stage-end' && e.status) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
  }
  return [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gb: { type: 'string', default: '1' },
      'limit-mb': { type: 'string', default: '256' },
      'pad-json-mb': { type: 'string', default: '0' },
      keep: { type: 'boolean', default: false },
    },
  });
  const padMb = Number(values['pad-json-mb']);
  if (!Number.isFinite(padMb) || padMb < 0) throw new Error(`--pad-json-mb '${values['pad-json-mb']}' must be a number >= 0`);
  const gb = Number(values.gb);
  const limitMb = Number(values['limit-mb']);
  if (!Number.isFinite(gb) || gb <= 0 || gb > 64) throw new Error(`--gb '${values.gb}' must be a number in (0, 64]`);
  if (!Number.isFinite(limitMb) || limitMb <= 0) throw new Error(`--limit-mb '${values['limit-mb']}' must be a positive number`);
  if (!existsSync('/proc/self/status')) throw new Error('this benchmark reads /proc (Linux)');
  const project = mkdtempSync(join(os.tmpdir(), 'refinery-bench-analyze-'));
  try {
    writeFileSync(join(project, 'package.json'), '{ "type": "module", "private": true }\n');
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(REPO, join(project, 'node_modules', 'refinery'), 'dir');
    mkdirSync(join(project, 'pipelines'));
    cpSync(join(REPO, 'pipelines/analyze.yaml'), join(project, 'pipelines/analyze.yaml'));
    const t0 = performance.now();
    const gen = generateLogs({ outDir: join(project, 'logs'), seed: 1, scenarios: ['consensus'], eventsBytes: Math.round(gb * 1e9) });
    const events = join(project, 'logs', gen.logDirs[0] ?? '', 'turn_1', 'attempt_1', 'events.jsonl');
    const mb = statSync(events).size / 1e6;
    console.log(`generated ${mb.toFixed(1)} MB events.jsonl in ${((performance.now() - t0) / 1000).toFixed(1)}s -> ${events}`);
    if (padMb > 0)
      for (const name of ['status.json', 'coordination_events.json'])
        console.log(`padded ${name} to ${(padJson(join(events, '..', name), padMb * 1e6) / 1e6).toFixed(1)} MB`);
    const cold = await measure(project);
    const again = await measure(project);
    const rows = [
      { run: 'first (hash inputs + analyze)', m: cold },
      { run: 'second (up to date)', m: again },
    ].map(({ run, m }) => ({
      run,
      exit: m.code,
      stages: stageStatuses(m.stdout),
      seconds: m.seconds.toFixed(2),
      'tree peak MB (sum of VmHWM)': m.treePeakMb.toFixed(0),
      'sampled tree RSS MB': m.sampledSumMb.toFixed(0),
      'time -v max RSS MB': m.timeMaxMb === null ? 'n/a' : m.timeMaxMb.toFixed(0),
      processes: m.processes,
    }));
    console.table(rows);
    const worst = Math.max(cold.treePeakMb, again.treePeakMb);
    const ok = cold.code === 0 && again.code === 0 && worst <= limitMb;
    console.log(
      `${ok ? 'PASS' : 'FAIL'}: refinery run analyze on ${mb.toFixed(0)} MB events.jsonl, whole-tree peak ${worst.toFixed(0)} MB (limit ${limitMb} MB)`,
    );
    if (!ok) process.exitCode = 1;
  } finally {
    if (values.keep) console.log(`kept ${project}`);
    else rmSync(project, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
