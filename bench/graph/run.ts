// refinery against make and ninja on the same generated DAG, in one run.
// Usage: npx tsx bench/graph/run.ts [--shapes layered,sources] [--sizes 1000,10000] [--reps 3]
//          [--full-reps-large 1] [--task-stages 10000] [--no-daemon]
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  CHECKSUM_TASK,
  makeDag,
  makeManySourcesDag,
  makefile,
  ninjaFile,
  refineryPipeline,
  resetDir,
  stageOutput,
  writeSources,
  type Dag,
} from './generate.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WORK = path.join(REPO, 'bench', '.work', 'graph');
const CLI = path.join(REPO, 'bin', 'refinery.js');

type Tool = 'refinery' | 'make' | 'ninja';
/** layered: a tenth of the stages read sources, the rest earlier outputs; sources: one source file per stage (the edit loop). */
type Shape = 'layered' | 'sources';
const SHAPES: Record<Shape, { make: (n: number) => Dag; about: string }> = {
  layered: { make: (n) => makeDag(n), about: 'a tenth of the stages read 1-3 of N/10 sources, the rest 1-3 earlier outputs' },
  sources: {
    make: (n) => makeManySourcesDag(n),
    about:
      "each stage reads its own source, mostly the previous stage's output, sometimes one of the 20 before; the touched source has the median rebuild set",
  },
};

/** make reads MAKEFLAGS += -r from the generated Makefile (its built-in implicit rules off). */
function command(tool: Tool, dir: string): [string, string[]] {
  if (tool === 'make') return ['make', ['-j2', '-s']];
  if (tool === 'ninja') return ['ninja', ['-j2', '--quiet']];
  // As a user's `refinery run` starts it: the project's node_modules/.bin/refinery, a link to
  // bin/refinery.js, whose `#!/usr/bin/env node` line starts Node.
  return [userBin(dir), ['run', 'graph', '-j2']];
}

/** The bin a user runs in an installed project (setup links it as npm does). */
function userBin(dir: string): string {
  return path.join(dir, 'node_modules', '.bin', 'refinery');
}

function timeCommand(dir: string, tool: Tool): number {
  return timeArgv(dir, tool, command(tool, dir));
}

/** GNU time, to read a command's peak RSS (%M: the largest process of its tree, in KB). */
const GNU_TIME = '/usr/bin/time';
const rssUnavailable = existsSync(GNU_TIME) ? undefined : `${GNU_TIME} not found (GNU time reports the peak RSS)`;

/** Times the command under GNU time (every tool alike) and returns its peak RSS in MB too. */
function timeWithRss(dir: string, tool: Tool): { ms: number; rssMb?: number } {
  if (rssUnavailable) return { ms: timeCommand(dir, tool) };
  const report = path.join(dir, '.peak-rss');
  const [cmd, args] = command(tool, dir);
  const ms = timeArgv(dir, tool, [GNU_TIME, ['-f', '%M', '-o', report, cmd, ...args]]);
  const kb = Number(readFileSync(report, 'utf8').trim().split('\n').pop());
  rmSync(report);
  return { ms, rssMb: kb / 1024 };
}

let probes = 0;
/** Project folders, removed only when everything has been timed. */
const leftovers: string[] = [];

/** Microseconds per file creation, by creating 200 small files (kept until the end: deleting is what slows creation). */
function probeCreation(): number {
  probes += 1;
  const dir = path.join(WORK, '.probe', String(probes));
  mkdirSync(dir, { recursive: true });
  const start = process.hrtime.bigint();
  for (let i = 0; i < 200; i += 1) writeFileSync(path.join(dir, `f${i}`), 'probe\n');
  return Number(process.hrtime.bigint() - start) / 1e3 / 200;
}

/**
 * On this machine's file system, creating files is several times slower for seconds after
 * many files were deleted (a step before, or another tool's clean-up). Every timed command
 * waits, up to 20 s, until creating a file costs under 60 µs again, so no tool pays for
 * another's deletions.
 */
const settledAt: number[] = [];

function settle(): void {
  spawnSync('sync');
  const deadline = Date.now() + 20_000;
  let cost = probeCreation();
  while (cost > 60 && Date.now() < deadline) {
    spawnSync('sleep', ['0.5']);
    cost = probeCreation();
  }
  settledAt.push(cost);
}

/** settle(), waiting without blocking the event loop (so a running watch's output keeps being read). */
async function settleAsync(): Promise<void> {
  await runAsync(process.cwd(), ['sync', []]);
  const deadline = Date.now() + 20_000;
  let cost = probeCreation();
  while (cost > 60 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    cost = probeCreation();
  }
  settledAt.push(cost);
}

interface Finished {
  ms: number;
  status: number | null;
  stderr: string;
}

function runAsync(dir: string, [cmd, args]: [string, string[]]): Promise<Finished> {
  const start = process.hrtime.bigint();
  const child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, CI: 'true' } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  return new Promise((resolve) => {
    child.on('error', (e) => resolve({ ms: 0, status: null, stderr: e.message }));
    child.on('close', (status) => resolve({ ms: Number(process.hrtime.bigint() - start) / 1e6, status, stderr }));
  });
}

/** Runs a command once the disk settled, and how long it took; what it printed when `stdout` is 'pipe'. Throws when it fails. */
function runSettled(
  dir: string,
  tool: string,
  [cmd, args]: [string, string[]],
  env: NodeJS.ProcessEnv = process.env,
  stdout: 'ignore' | 'pipe' = 'ignore',
  settled: () => void = () => {},
): { ms: number; stdout: string } {
  settle();
  settled();
  const start = process.hrtime.bigint();
  const result = spawnSync(cmd, args, { cwd: dir, stdio: ['ignore', stdout, 'pipe'], env: { ...env, CI: 'true' } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${tool} failed in ${dir}: ${result.stderr?.toString().slice(-2000)}`);
  return { ms, stdout: result.stdout?.toString() ?? '' };
}

function timeArgv(dir: string, tool: string, argv: [string, string[]], env: NodeJS.ProcessEnv = process.env): number {
  return runSettled(dir, tool, argv, env).ms;
}

/** Milliseconds the machine's cores have been busy (every process), from /proc/stat; undefined off Linux. */
function busyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    // user, nice, system, irq, softirq: not idle, iowait or steal.
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
    return ((user + nice + system + irq + softirq) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

const CPU_COUNT = os.availableParallelism();
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/**
 * A full build: its wall time, and the core-seconds the machine spent meanwhile (the tool and
 * every process it started; the machine is otherwise quiet), which say how busy it kept the
 * cores: a tool that waits on itself leaves them idle.
 */
function timeFullBuild(dir: string, tool: Tool): { ms: number; cpuMs?: number } {
  let before: number | undefined;
  const ms = runSettled(dir, tool, command(tool, dir), process.env, 'ignore', () => {
    before = busyMs();
  }).ms;
  const after = busyMs();
  return before === undefined || after === undefined ? { ms } : { ms, cpuMs: after - before };
}

const BUILTIN_RULES_MAKEFILE = 'Makefile.builtin-rules';

function setup(dir: string, dag: Dag, tool: Tool, kind: 'run' | 'task' = 'run'): void {
  resetDir(dir);
  writeSources(dir, dag);
  mkdirSync(path.join(dir, 'out'), { recursive: true });
  if (tool === 'make') {
    writeFileSync(path.join(dir, 'Makefile'), makefile(dag));
    writeFileSync(path.join(dir, BUILTIN_RULES_MAKEFILE), makefile(dag, { builtinRules: true }));
  }
  if (tool === 'ninja') writeFileSync(path.join(dir, 'build.ninja'), ninjaFile(dag));
  if (tool === 'refinery') {
    mkdirSync(path.join(dir, 'pipelines'));
    writeFileSync(path.join(dir, 'pipelines', 'graph.yaml'), refineryPipeline(dag, kind));
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(REPO, path.join(dir, 'node_modules', 'refinery'), 'dir');
    mkdirSync(path.join(dir, 'node_modules', '.bin'));
    symlinkSync(path.join('..', 'refinery', 'bin', 'refinery.js'), userBin(dir));
    if (kind === 'task') {
      mkdirSync(path.join(dir, 'tasks'));
      writeFileSync(path.join(dir, 'tasks', 'checksum.ts'), CHECKSUM_TASK);
    }
  }
}

function clean(dir: string, tool: Tool): void {
  rmSync(path.join(dir, 'out'), { recursive: true, force: true });
  mkdirSync(path.join(dir, 'out'));
  if (tool === 'ninja') rmSync(path.join(dir, '.ninja_log'), { force: true });
  if (tool === 'refinery') rmSync(path.join(dir, '.refinery', 'state'), { recursive: true, force: true });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

interface Figures {
  full: number;
  /** Core-milliseconds the machine spent during the full build (median; see timeFullBuild); Linux only. */
  fullCpu?: number;
  noop: number;
  touch: number;
  /** The largest peak RSS (MB) among the touch runs; undefined without GNU time. */
  touchRssMb?: number;
  /** make only: its no-op with the built-in implicit rules on. */
  builtinRulesNoop?: number;
  /** make only: what no tool can beat here (see measureFloors). */
  floors?: Floors;
  /** refinery only, where NODE_EXTRA_CA_CERTS is set: the cold figures without it (see EXTRA_CA). */
  withoutExtraCa?: { noop: number; touch: number };
  /** A digest of out/ after the full build, to check every tool built the same files. */
  outputs: string;
  dir: string;
}

function measure(n: number, dag: Dag, tool: Tool, reps: number, fullReps: number, shape: Shape): Figures {
  const dir = path.join(WORK, `${shape}-${tool}-${n}`);
  setup(dir, dag, tool);
  const full: number[] = [];
  const fullCpu: number[] = [];
  for (let r = 0; r < fullReps; r += 1) {
    clean(dir, tool);
    const { ms, cpuMs } = timeFullBuild(dir, tool);
    full.push(ms);
    if (cpuMs !== undefined) fullCpu.push(cpuMs);
  }
  const outputs = digestOutputs(dir);
  const noop: number[] = [];
  for (let r = 0; r < reps; r += 1) noop.push(timeCommand(dir, tool));
  const builtinRulesNoop: number[] = [];
  if (tool === 'make')
    for (let r = 0; r < reps; r += 1) builtinRulesNoop.push(timeArgv(dir, tool, ['make', ['-f', BUILTIN_RULES_MAKEFILE, '-j2', '-s']]));
  const touch: number[] = [];
  const rss: number[] = [];
  for (let r = 0; r < reps; r += 1) {
    // A real edit (content and mtime change) of the source whose rebuild set is the median one.
    appendFileSync(path.join(dir, dag.touched), `edit ${r}\n`);
    const { ms, rssMb } = timeWithRss(dir, tool);
    touch.push(ms);
    if (rssMb !== undefined) rss.push(rssMb);
  }
  const floors = tool === 'make' ? measureFloors(dir, dag, reps, fullReps) : undefined;
  const withoutExtraCa =
    tool === 'refinery' && EXTRA_CA ? measureCold(dir, dag, reps, envWithoutExtraCa(), 'without extra CAs') : undefined;
  leftovers.push(dir);
  return {
    ...(floors ? { floors } : {}),
    ...(withoutExtraCa ? { withoutExtraCa } : {}),
    full: median(full),
    ...(fullCpu.length > 0 ? { fullCpu: median(fullCpu) } : {}),
    noop: median(noop),
    touch: median(touch),
    touchRssMb: rss.length > 0 ? Math.max(...rss) : undefined,
    builtinRulesNoop: builtinRulesNoop.length > 0 ? median(builtinRulesNoop) : undefined,
    outputs,
    dir,
  };
}

/**
 * Lower bounds, timed in make's folder after make's own figures:
 * - `noop`: Node started on a script that stats each input and output once (stat-floor.mjs), as
 *   refinery's cold no-op must at the least: what any no-op check written for Node costs here.
 * - `full`: the same commands started two at a time by os.posix_spawn without a shell
 *   (spawn-floor.py), in no dependency order (they read make's outputs, so each one succeeds),
 *   each writing a new file in a folder emptied before every repetition, as a full build writes
 *   into an emptied out/: what starting the commands alone costs, whatever tool starts them.
 *   (Truncating the existing, synced outputs instead cost 1.6-1.9x as much here, the file
 *   system freeing their blocks: the floor then came out above make's whole build.)
 * - `chain`: the touched source's stale stages' commands, started the same way one after another
 *   in dependency order (a touch's stages are mostly a chain), the loop's own time with Python's
 *   start left out. The touch floor is the stat floor's whole process plus this.
 */
interface Floors {
  noop: number;
  full: number;
  /** The touched stages' commands started one after another in dependency order (the loop's own time); the touch floor is `noop` plus this. */
  chain: number;
  /** The stat floor without NODE_EXTRA_CA_CERTS, where it is set. */
  noopWithoutExtraCa?: number;
}

/**
 * NODE_EXTRA_CA_CERTS, where set (this machine sets it to the system's CA bundle), makes every
 * Node process read and parse that file as it starts, before any script runs: ~40 ms of
 * `node -e 0`'s ~65 here. It is the environment's, not refinery's, and refinery leaves it alone
 * (tasks and model backends may need those CAs); the cold figures are timed once more without
 * it, as on a machine that does not set it, and printed beside the others, not instead of them.
 */
const EXTRA_CA = process.env.NODE_EXTRA_CA_CERTS;

function envWithoutExtraCa(): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _dropped, ...env } = process.env;
  return env;
}

/** refinery's cold no-op and touch once more, in another environment. */
function measureCold(dir: string, dag: Dag, reps: number, env: NodeJS.ProcessEnv, edit: string): { noop: number; touch: number } {
  const noop: number[] = [];
  for (let r = 0; r < reps; r += 1) noop.push(timeArgv(dir, 'refinery', command('refinery', dir), env));
  const touch: number[] = [];
  for (let r = 0; r < reps; r += 1) {
    appendFileSync(path.join(dir, dag.touched), `edit ${edit} ${r}\n`);
    touch.push(timeArgv(dir, 'refinery', command('refinery', dir), env));
  }
  return { noop: median(noop), touch: median(touch) };
}

/** Every file a no-op looks at: what the stages read, and what they write. */
function floorPaths(dag: Dag): string[] {
  return [...new Set([...dag.inputs.flat(), ...dag.inputs.map((_, i) => stageOutput(i))])];
}

function measureFloors(dir: string, dag: Dag, reps: number, fullReps: number): Floors {
  const paths = path.join(dir, '.floor-paths');
  writeFileSync(paths, `${floorPaths(dag).join('\n')}\n`);
  const commands = path.join(dir, '.floor-commands');
  writeFileSync(commands, `${dag.inputs.map((_, i) => floorCommand(dag, i, FLOOR_OUT)).join('\n')}\n`);
  const statFloor: [string, string[]] = [process.execPath, [path.join(REPO, 'bench', 'graph', 'stat-floor.mjs'), paths]];
  const noop: number[] = [];
  for (let r = 0; r < reps; r += 1) noop.push(timeArgv(dir, 'node (stat floor)', statFloor));
  const withoutCa: number[] = [];
  const lean = envWithoutExtraCa();
  if (EXTRA_CA) for (let r = 0; r < reps; r += 1) withoutCa.push(timeArgv(dir, 'node (stat floor)', statFloor, lean));
  const spawnFloor = path.join(REPO, 'bench', 'graph', 'spawn-floor.py');
  const full: number[] = [];
  for (let r = 0; r < fullReps; r += 1) {
    rmSync(path.join(dir, FLOOR_OUT), { recursive: true, force: true });
    mkdirSync(path.join(dir, FLOOR_OUT));
    full.push(timeArgv(dir, 'python3 (spawn floor)', ['python3', [spawnFloor, commands, '2']]));
  }
  rmSync(path.join(dir, FLOOR_OUT), { recursive: true, force: true });
  // A touch's commands: one after another, in dependency order, as a chain of stages must run.
  const touchCommands = path.join(dir, '.floor-touch-commands');
  writeFileSync(touchCommands, `${dag.touchStages.map((i) => floorCommand(dag, i)).join('\n')}\n`);
  const chain: number[] = [];
  for (let r = 0; r < reps; r += 1) chain.push(loopMs(dir, ['python3', [spawnFloor, touchCommands, '1']]));
  return {
    noop: median(noop),
    full: median(full),
    chain: median(chain),
    ...(withoutCa.length > 0 ? { noopWithoutExtraCa: median(withoutCa) } : {}),
  };
}

/** What spawn-floor.py says its loop took (its interpreter's start left out). */
function loopMs(dir: string, argv: [string, string[]]): number {
  const { stdout } = runSettled(dir, 'python3 (spawn floor)', argv, process.env, 'pipe');
  const ms = Number(stdout.trim());
  if (!Number.isFinite(ms)) throw new Error(`python3 (spawn floor) in ${dir} printed no time: ${stdout.slice(-200)}`);
  return ms;
}

/** Where the full-build floor writes: new files, as a full build's are (its inputs stay make's outputs). */
const FLOOR_OUT = 'floor-out';

/** The floor's form of stage i's command (spawn-floor.py's lines): the same cksum the Makefile runs, its output in `outDir` (out/ where unsaid). */
function floorCommand(dag: Dag, i: number, outDir?: string): string {
  const output = outDir === undefined ? stageOutput(i) : path.posix.join(outDir, path.posix.basename(stageOutput(i)));
  return `cksum ${(dag.inputs[i] as string[]).join(' ')} > ${output}`;
}

function digestOutputs(dir: string): string {
  const hash = createHash('sha256');
  const out = path.join(dir, 'out');
  for (const name of readdirSync(out).sort()) hash.update(`${name}\0`).update(readFileSync(path.join(out, name)));
  return hash.digest('hex');
}

/** `noop`/`touch`: `refinery run` as a user starts it (the program); `nodeNoop`/`nodeTouch`: `node bin/refinery.js run` (as npx starts it). */
type DaemonFigures = { noop: number; touch: number; nodeNoop: number; nodeTouch: number; readyMs: number } | { unavailable: string };

/** Without the run-through-daemon feature, `refinery run` is refused while the watch holds the project lock. */
function failure(run: Finished): string {
  const firstLine = run.stderr.trim().split('\n')[0];
  return /refinery\/lock|another refinery process/.test(run.stderr)
    ? `refused (the run-through-daemon feature is not in this build): ${firstLine}`
    : `refinery run failed with the watch running (exit ${run.status}): ${firstLine}`;
}

/**
 * refinery with its watch daemon running: `refinery run` asks the daemon over
 * .refinery/watch/sock. The watch starts after the cold measurements (its first run is then a
 * no-op) and stops with SIGINT at the end. Everything here is asynchronous so the watch's
 * output (a pipe, written synchronously by node) is read while commands run.
 */
async function measureDaemon(dir: string, dag: Dag, reps: number): Promise<DaemonFigures> {
  const spawned = process.hrtime.bigint();
  const watch = spawn(process.execPath, [CLI, 'watch', 'graph', '--no-mqtt', '-j2', '--json'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  });
  let stderr = '';
  watch.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const exited = new Promise<number | null>((resolve) => watch.on('close', (code) => resolve(code)));
  try {
    const started = await firstRunEnd(watch.stdout, exited);
    if (started !== 'ready') return { unavailable: `the watch did not start (${started}): ${stderr.trim().slice(-500)}` };
    // Its first scan of the project and its first run (a no-op after the cold measurements).
    const readyMs = Number(process.hrtime.bigint() - spawned) / 1e6;
    const viaNode: [string, string[]] = [process.execPath, [CLI, 'run', 'graph', '-j2']];
    let edits = 0;
    // Each run after the disk settled. A touch edits the source, then runs at once: the watch's
    // own reaction to the edit overlaps the run, as it does for a user.
    const medianOf = async (argv: [string, string[]], edit: boolean): Promise<number | string> => {
      const ms: number[] = [];
      for (let r = 0; r < reps; r += 1) {
        await settleAsync();
        if (edit) appendFileSync(path.join(dir, dag.touched), `daemon edit ${edits++}\n`);
        const run = await runAsync(dir, argv);
        if (run.status !== 0) return failure(run);
        ms.push(run.ms);
      }
      return median(ms);
    };
    const series = [
      ['noop', command('refinery', dir), false],
      ['nodeNoop', viaNode, false],
      ['touch', command('refinery', dir), true],
      ['nodeTouch', viaNode, true],
    ] as const;
    const figures = { noop: 0, nodeNoop: 0, touch: 0, nodeTouch: 0, readyMs };
    for (const [key, argv, edit] of series) {
      const result = await medianOf(argv, edit);
      if (typeof result === 'string') return { unavailable: result };
      figures[key] = result;
    }
    return figures;
  } finally {
    await stopWatch(watch, exited);
  }
}

/** Resolves 'ready' on the watch's first `run-end` event, else why not. */
function firstRunEnd(stdout: NodeJS.ReadableStream, exited: Promise<number | null>): Promise<string> {
  const lines = createInterface({ input: stdout });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('no run-end within 300 s'), 300_000);
    const done = (why: string) => {
      clearTimeout(timer);
      resolve(why);
    };
    lines.on('line', (line) => {
      if (line.includes('"run-end"') && parsedType(line) === 'run-end') done('ready');
    });
    void exited.then((code) => done(`it exited with code ${code}`));
  });
}

function parsedType(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { type?: string }).type;
  } catch {
    return undefined;
  }
}

async function stopWatch(watch: ReturnType<typeof spawn>, exited: Promise<number | null>): Promise<void> {
  if (watch.exitCode !== null || watch.signalCode !== null) return;
  watch.kill('SIGINT');
  const timer = setTimeout(() => watch.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

function fmtMb(mb: number | undefined): string {
  return mb === undefined ? 'n/a' : `${mb.toFixed(0)} MB`;
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a === undefined || b === undefined ? '—' : `${(a / b).toFixed(2)}×`;
}

interface Target {
  text: string;
  met: (refinery: number, make: number) => boolean;
}

/** Issue #33's budgets, for the many-sources shape: the no-op's time at N = 100, the full build's ratio at N = 1,000, the rest at N = 10,000. */
function targetFor(shape: Shape, n: number, row: Row): Target | undefined {
  if (shape !== 'sources') return undefined;
  const times: (limit: number) => Target = (limit) => ({ text: `≤ ${limit.toFixed(2)}× make`, met: (r, m) => r <= limit * m });
  if (n === 100 && row === 'noop') return { text: '≤ 150 ms', met: (r) => r <= 150 };
  if (n === 1000 && row === 'full') return times(2);
  if (n !== 10_000) return undefined;
  if (row === 'noop') return times(3);
  if (row === 'touch') return times(4);
  if (row === 'daemonNoop' || row === 'daemonTouch') return times(1.3);
  if (row === 'rss') return { text: '≤ 160 MB', met: (r) => r <= 160 };
  return undefined;
}

type Row = 'full' | 'noop' | 'touch' | 'daemonNoop' | 'daemonTouch' | 'nodeNoop' | 'nodeTouch' | 'rss';

const ROW_LABELS: Record<Row, string> = {
  full: 'full build -j2',
  noop: 'no-op, cold',
  touch: 'touch one source, cold',
  daemonNoop: 'no-op, daemon running',
  daemonTouch: 'touch one source, daemon running',
  nodeNoop: "no-op, daemon running, Node's client (npx)",
  nodeTouch: "touch one source, daemon running, Node's client (npx)",
  rss: 'peak RSS of the touch run',
};

function printTable(shape: Shape, n: number, dag: Dag, results: Record<Tool, Figures>, daemon: DaemonFigures | undefined): void {
  console.log(
    `\n${shape}: N = ${n} stages, ${dag.sources.length} source files (${SHAPES[shape].about}); the touch makes ${dag.touchReach} stages stale`,
  );
  console.log('| measure | make -j2 | ninja -j2 | refinery -j2 | refinery/make | refinery/ninja | target |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const cell = (target: Target | undefined, r: number | undefined, m: number | undefined) =>
    target === undefined ? '' : r === undefined || m === undefined ? target.text : `${target.text} ${target.met(r, m) ? '✓' : '✗'}`;
  for (const row of ['full', 'noop', 'touch'] as const) {
    const [m, nj, r] = [results.make[row], results.ninja[row], results.refinery[row]];
    console.log(
      `| ${ROW_LABELS[row]} | ${fmt(m)} | ${fmt(nj)} | ${fmt(r)} | ${ratio(r, m)} | ${ratio(r, nj)} | ${cell(targetFor(shape, n, row), r, m)} |`,
    );
  }
  if (daemon) {
    for (const [row, cold, key] of [
      ['daemonNoop', 'noop', 'noop'],
      ['daemonTouch', 'touch', 'touch'],
      ['nodeNoop', 'noop', 'nodeNoop'],
      ['nodeTouch', 'touch', 'nodeTouch'],
    ] as const) {
      const [m, nj] = [results.make[cold], results.ninja[cold]];
      const r = 'unavailable' in daemon ? undefined : daemon[key];
      console.log(
        `| ${ROW_LABELS[row]} | ${fmt(m)} (cold) | ${fmt(nj)} (cold) | ${r === undefined ? 'n/a' : fmt(r)} | ${ratio(r, m)} | ${ratio(r, nj)} | ${cell(targetFor(shape, n, row), r, m)} |`,
      );
    }
  }
  const rss = (tool: Tool) => results[tool].touchRssMb;
  console.log(
    `| ${ROW_LABELS.rss} | ${fmtMb(rss('make'))} | ${fmtMb(rss('ninja'))} | ${fmtMb(rss('refinery'))} | ${ratio(rss('refinery'), rss('make'))} | ${ratio(rss('refinery'), rss('ninja'))} | ${cell(targetFor(shape, n, 'rss'), rss('refinery'), rss('make'))} |`,
  );
  const floors = results.make.floors;
  if (floors)
    console.log(
      `floors (timed in the same run): a Node process that only stats the ${floorPaths(dag).length} inputs and outputs once ${fmt(floors.noop)} (${ratio(floors.noop, results.make.noop)} make's no-op; refinery's cold no-op is ${ratio(results.refinery.noop, floors.noop)} of it); the ${dag.inputs.length} commands started two at a time by posix_spawn, no shell and no dependency order, ${fmt(floors.full)} (${ratio(floors.full, results.make.full)} make's full build; refinery's is ${ratio(results.refinery.full, floors.full)} of it); a touch, that stat floor plus the ${dag.touchReach} stale stages' commands started one after another in dependency order (${fmt(floors.chain)}), ${fmt(floors.noop + floors.chain)} (${ratio(floors.noop + floors.chain, results.make.touch)} make's touch; refinery's cold touch is ${ratio(results.refinery.touch, floors.noop + floors.chain)} of it)`,
    );
  const cpu = (tool: Tool): string => {
    const { fullCpu, full } = results[tool];
    return fullCpu === undefined
      ? 'n/a'
      : `${(fullCpu / 1000).toFixed(2)} core-s, the cores ${Math.round((100 * fullCpu) / (full * CPU_COUNT))} % busy`;
  };
  console.log(
    `full build, CPU of every process meanwhile (/proc/stat, ${CPU_COUNT} cores): make ${cpu('make')}; ninja ${cpu('ninja')}; refinery ${cpu('refinery')}`,
  );
  const lean = results.refinery.withoutExtraCa;
  if (lean)
    console.log(
      `without NODE_EXTRA_CA_CERTS (set here to ${EXTRA_CA}; every Node process parses it at start), as on a machine that does not set it: refinery's cold no-op ${fmt(lean.noop)} (${ratio(lean.noop, results.make.noop)} make), cold touch ${fmt(lean.touch)} (${ratio(lean.touch, results.make.touch)} make)${floors?.noopWithoutExtraCa === undefined ? '' : `; the Node stat floor ${fmt(floors.noopWithoutExtraCa)} (${ratio(floors.noopWithoutExtraCa, results.make.noop)} make), the touch floor ${fmt(floors.noopWithoutExtraCa + floors.chain)} (${ratio(floors.noopWithoutExtraCa + floors.chain, results.make.touch)} make)`}`,
    );
  if (daemon && 'unavailable' in daemon) console.log(`daemon: ${daemon.unavailable}`);
  if (rssUnavailable) console.log(`peak RSS: n/a, ${rssUnavailable}`);
  else console.log("peak RSS: the largest of the touch runs, GNU time %M (the largest single process of the command's tree)");
  const builtin = results.make.builtinRulesNoop as number;
  console.log(
    `make with its built-in implicit rules on (no -r; informational, not a peer): no-op ${fmt(builtin)}, ${ratio(builtin, results.make.noop)} make -r's ${fmt(results.make.noop)}`,
  );
  const same = results.make.outputs === results.ninja.outputs && results.make.outputs === results.refinery.outputs;
  console.log(
    same
      ? 'outputs after the full build: identical for make, ninja and refinery'
      : `outputs after the full build DIFFER: make ${results.make.outputs.slice(0, 12)}, ninja ${results.ninja.outputs.slice(0, 12)}, refinery ${results.refinery.outputs.slice(0, 12)}`,
  );
  console.log(machine());
}

let machineLine: string | undefined;

function machine(): string {
  const version = (cmd: string, arg: string) => spawnSync(cmd, [arg]).stdout?.toString().split('\n')[0]?.trim() ?? '?';
  machineLine ??= `machine: ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GB, ${process.platform} ${process.arch}, node ${process.version}, ${version('make', '--version')} (Makefile with MAKEFLAGS += -r), ninja ${version('ninja', '--version')}`;
  return machineLine;
}

/**
 * Builds dist/ and times refinery as an installed package runs: from dist/, without the check a
 * clone makes at every start that dist/ is newer than every file of src/ (bin/refinery.js).
 */
function buildAsInstalled(): void {
  const build = spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) throw new Error('npm run build failed: refinery is timed from its build');
  process.env.REFINERY_FROM_DIST = '1';
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      shapes: { type: 'string', default: 'layered,sources' },
      sizes: { type: 'string', default: '1000,10000' },
      reps: { type: 'string', default: '3' },
      'full-reps-large': { type: 'string', default: '1' },
      'task-stages': { type: 'string', default: '10000' },
      daemon: { type: 'boolean', default: true },
      'no-daemon': { type: 'boolean', default: false },
    },
  });
  const sizes = values.sizes
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const reps = Number(values.reps);
  const withDaemon = values.daemon && !values['no-daemon'];
  buildAsInstalled();
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  console.log(
    `bench/graph: ${reps} repetitions (median), -j2, ${process.platform} ${process.arch}, node ${process.version}, load average ${os.loadavg()[0]?.toFixed(2)}`,
  );
  const shapes = values.shapes.split(',').filter((s): s is Shape => s in SHAPES);
  for (const [shape, n] of shapes.flatMap((shape) => sizes.map((n) => [shape, n] as const))) {
    const dag = SHAPES[shape].make(n);
    const fullReps = n >= 10_000 ? Number(values['full-reps-large']) : reps;
    const results = {} as Record<Tool, Figures>;
    for (const tool of ['make', 'ninja', 'refinery'] as Tool[]) {
      process.stdout.write(`  N=${n} ${tool}… `);
      results[tool] = measure(n, dag, tool, reps, fullReps, shape);
      console.log(`full ${fmt(results[tool].full)}, no-op ${fmt(results[tool].noop)}, touch ${fmt(results[tool].touch)}`);
    }
    let daemon: DaemonFigures | undefined;
    if (withDaemon) {
      process.stdout.write(`  N=${n} refinery, watch daemon running… `);
      daemon = await measureDaemon(results.refinery.dir, dag, reps);
      console.log(
        'unavailable' in daemon
          ? 'n/a'
          : `no-op ${fmt(daemon.noop)}, touch ${fmt(daemon.touch)}; the watch was up (first scan and first run) in ${fmt(daemon.readyMs)}`,
      );
    }
    printTable(shape, n, dag, results, daemon);
    console.log('');
  }
  const taskStages = Number(values['task-stages']);
  if (taskStages > 0) measureTasks(taskStages, reps);
  for (const dir of [...leftovers, path.join(WORK, '.probe')]) rmSync(dir, { recursive: true, force: true });
  const sorted = [...settledAt].sort((a, b) => a - b);
  const unsettled = sorted.filter((cost) => cost > 60).length;
  console.log(
    `file creation just before the timed commands: ${sorted[0]?.toFixed(0)}–${sorted[sorted.length - 1]?.toFixed(0)} µs per file (each waited, up to 20 s, for < 60 µs; ${unsettled} of ${sorted.length} still above after 20 s)`,
  );
}

/**
 * N in-process `task:` stages, each a first run (nothing cached: the pipeline file is parsed
 * too), against the naive peer: a script that calls the same task module once per stage in
 * order, writing straight to the outputs. Every run gets a project folder of its own, made
 * before any is timed and removed after all are: deleting thousands of files makes the
 * creation of files slow for seconds after on this machine's file system, whoever deletes.
 */
function measureTasks(n: number, reps: number): void {
  const dag = makeDag(n);
  const stages = JSON.stringify(dag.inputs.map((inputs, i) => ({ inputs, output: stageOutput(i) })));
  const runs = Array.from({ length: reps }, (_, r) =>
    (['naive', 'refinery'] as const).map((tool) => ({ tool, dir: path.join(WORK, `task-${n}-${tool}-${r}`) })),
  ).flat();
  for (const { dir } of runs) {
    setup(dir, dag, 'refinery', 'task');
    writeFileSync(path.join(dir, 'dag.json'), stages);
  }
  const times = { naive: [] as number[], refinery: [] as number[] };
  for (const { tool, dir } of runs) {
    times[tool].push(
      tool === 'naive'
        ? timeArgv(dir, tool, [process.execPath, [path.join(REPO, 'bench', 'graph', 'naive-tasks.mjs'), 'dag.json']])
        : timeCommand(dir, 'refinery'),
    );
  }
  leftovers.push(...runs.map((r) => r.dir));
  const [a, b] = [median(times.refinery), median(times.naive)];
  console.log(
    `${n} in-process task: stages (checksum of 1-3 files each), first run, median of ${reps}: refinery ${fmt(a)} (target ≤ 5 s), naive loop over the same task ${fmt(b)}, refinery/naive ${(a / b).toFixed(2)}×`,
  );
  console.log(`  each run: refinery ${times.refinery.map(fmt).join(', ')}; naive ${times.naive.map(fmt).join(', ')}`);
}

await main();
