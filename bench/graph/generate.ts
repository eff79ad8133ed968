import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../../src/workflows/refine/seeded.ts';

export interface Dag {
  /** For each stage i: the paths it reads (sources or earlier stages' outputs). */
  inputs: string[][];
  sources: string[];
  /** The source the touch measurement edits. */
  touched: string;
  /** How many stages that edit makes stale. */
  touchReach: number;
  /** Those stages, in dependency order (a stage reads only earlier stages' outputs). */
  touchStages: number[];
}

/** N stages; the first tenth read 1-3 source files, the rest 1-3 outputs of earlier stages. */
export function makeDag(n: number, seed = 42): Dag {
  const rand = mulberry32(seed);
  const sourceCount = Math.max(1, Math.floor(n / 10));
  const sources = Array.from({ length: sourceCount }, (_, i) => `src/f${i}.txt`);
  const inputs: string[][] = [];
  for (let i = 0; i < n; i += 1) {
    const k = 1 + Math.floor(rand() * 3);
    const picks = new Set<string>();
    for (let j = 0; j < k; j += 1)
      picks.add(i < sourceCount ? (sources[Math.floor(rand() * sourceCount)] as string) : `out/s${Math.floor(rand() * i)}.txt`);
    inputs.push([...picks].sort());
  }
  const touched = sources[0] as string;
  const touchStages = reach(readersOf(inputs), touched);
  return { inputs, sources, touched, touchReach: touchStages.length, touchStages };
}

/**
 * The edit-loop shape: N stages, each reading its own source file, with probability 0.9 the
 * previous stage's output, and with probability 0.1 one output of the 20 stages before that
 * (1-3 files in all, one earlier output on average, as before). Reading mostly near neighbours
 * is what keeps an edit's reach local, as in a code base: picks from anywhere make a median
 * source reach 1-2 stages, or a few thousand once each output has more than one reader on
 * average. At N = 10,000 (seed 7) the median source reaches 12 stages (10 at N = 1,000; other
 * seeds 10-13); the touched source is the one whose rebuild set is the median size.
 */
export function makeManySourcesDag(n: number, seed = 7): Dag {
  const rand = mulberry32(seed);
  const sources = Array.from({ length: n }, (_, i) => `src/f${i}.txt`);
  const inputs: string[][] = [];
  for (let i = 0; i < n; i += 1) {
    const picks = new Set<string>([sources[i] as string]);
    if (i > 0 && rand() < PREVIOUS_STAGE) picks.add(stageOutput(i - 1));
    if (i > 1 && rand() < NEARBY_STAGE) {
      const from = Math.max(0, i - 1 - NEARBY_WINDOW);
      picks.add(stageOutput(from + Math.floor(rand() * (i - 1 - from))));
    }
    inputs.push([...picks].sort());
  }
  const readers = readersOf(inputs);
  const reaches = sources.map((s) => ({ s, r: reach(readers, s).length })).sort((a, b) => a.r - b.r);
  const median = reaches[Math.floor(reaches.length / 2)] as { s: string; r: number };
  const touchStages = reach(readers, median.s);
  return { inputs, sources, touched: median.s, touchReach: touchStages.length, touchStages };
}

const PREVIOUS_STAGE = 0.9;
const NEARBY_STAGE = 0.1;
const NEARBY_WINDOW = 20;

/** For each path, the stages that read it. */
function readersOf(inputs: string[][]): Map<string, number[]> {
  const readers = new Map<string, number[]>();
  inputs.forEach((ins, i) => {
    for (const p of ins) {
      const list = readers.get(p);
      if (list) list.push(i);
      else readers.set(p, [i]);
    }
  });
  return readers;
}

/** The stages a change to `path` makes stale (those reading it, and everything downstream), in order. */
function reach(readers: Map<string, number[]>, path: string): number[] {
  const seen = new Set<number>();
  const queue = [...(readers.get(path) ?? [])];
  while (queue.length > 0) {
    const i = queue.pop() as number;
    if (seen.has(i)) continue;
    seen.add(i);
    queue.push(...(readers.get(stageOutput(i)) ?? []));
  }
  return [...seen].sort((a, b) => a - b);
}

export function stageOutput(i: number): string {
  return `out/s${i}.txt`;
}

export function writeSources(dir: string, dag: Dag): void {
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  dag.sources.forEach((s, i) => writeFileSync(path.join(dir, s), `source ${i}\n`));
}

export function refineryPipeline(dag: Dag, kind: 'run' | 'task'): string {
  const lines = ['pipeline: graph', 'stages:'];
  dag.inputs.forEach((ins, i) => {
    const list = `[${ins.join(', ')}]`;
    if (kind === 'run')
      lines.push(`  s${i}: { run: "cksum ${ins.join(' ')} > \${outputs.o}", inputs: ${list}, outputs: { o: ${stageOutput(i)} } }`);
    else lines.push(`  s${i}: { task: checksum, with: { files: ${list} }, inputs: ${list}, outputs: { o: ${stageOutput(i)} } }`);
  });
  return `${lines.join('\n')}\n`;
}

// Trivial work: an md5 of each small input file (read synchronously, as small files usually are).
export const CHECKSUM_TASK = `import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'checksum',
  params: z.object({ files: z.array(z.string()) }),
  async run(ctx) {
    const lines = ctx.params.files.map((f) => createHash('md5').update(readFileSync(f)).digest('hex') + ' ' + f);
    writeFileSync(ctx.outputs.o, lines.join('\\n') + '\\n');
  },
});
`;

/**
 * The Makefile has GNU make's built-in implicit rules off, as the large generated ones (CMake's,
 * automake's) do: with them on, make searches its built-in pattern rules (RCS, SCCS, %.c, …) for
 * every source prerequisite, and a no-op at N = 10,000 many-sources stages takes 2.2 s, not 50 ms.
 * `builtinRules: true` leaves them on, to show that difference.
 */
export function makefile(dag: Dag, { builtinRules = false } = {}): string {
  const header = builtinRules ? '' : 'MAKEFLAGS += -r\n.SUFFIXES:\n\n';
  const all = dag.inputs.map((_, i) => stageOutput(i)).join(' ');
  const rules = dag.inputs.map((ins, i) => `${stageOutput(i)}: ${ins.join(' ')}\n\tcksum $^ > $@`);
  return `${header}all: ${all}\n\nout:\n\tmkdir -p out\n\n${rules.join('\n')}\n`;
}

export function ninjaFile(dag: Dag): string {
  const builds = dag.inputs.map((ins, i) => `build ${stageOutput(i)}: cksum ${ins.join(' ')}`);
  return `rule cksum\n  command = cksum $in > $out\n\n${builds.join('\n')}\n`;
}

export function resetDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
