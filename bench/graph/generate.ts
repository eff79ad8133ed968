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
  return { inputs, sources, touched, touchReach: reach(inputs, touched) };
}

/**
 * The edit-loop shape: N stages, each reading its own source file and 0-2 outputs of earlier
 * stages (1-3 files in all). The touched source is the one whose rebuild set is the median size.
 */
export function makeManySourcesDag(n: number, seed = 7): Dag {
  const rand = mulberry32(seed);
  const sources = Array.from({ length: n }, (_, i) => `src/f${i}.txt`);
  const inputs: string[][] = [];
  for (let i = 0; i < n; i += 1) {
    const picks = new Set<string>([sources[i] as string]);
    const extra = i === 0 ? 0 : Math.floor(rand() * 3);
    for (let j = 0; j < extra; j += 1) picks.add(stageOutput(Math.floor(rand() * i)));
    inputs.push([...picks].sort());
  }
  const reaches = sources.map((s) => ({ s, r: reach(inputs, s) })).sort((a, b) => a.r - b.r);
  const median = reaches[Math.floor(reaches.length / 2)] as { s: string; r: number };
  return { inputs, sources, touched: median.s, touchReach: median.r };
}

/** How many stages a change to `path` makes stale: those reading it, and everything downstream. */
function reach(inputs: string[][], path: string): number {
  const readers = new Map<string, number[]>();
  inputs.forEach((ins, i) => {
    for (const p of ins) readers.set(p, [...(readers.get(p) ?? []), i]);
  });
  const seen = new Set<number>();
  const queue = [...(readers.get(path) ?? [])];
  while (queue.length > 0) {
    const i = queue.pop() as number;
    if (seen.has(i)) continue;
    seen.add(i);
    queue.push(...(readers.get(stageOutput(i)) ?? []));
  }
  return seen.size;
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

export function makefile(dag: Dag): string {
  const all = dag.inputs.map((_, i) => stageOutput(i)).join(' ');
  const rules = dag.inputs.map((ins, i) => `${stageOutput(i)}: ${ins.join(' ')}\n\tcksum $^ > $@`);
  return `all: ${all}\n\nout:\n\tmkdir -p out\n\n${rules.join('\n')}\n`;
}

export function ninjaFile(dag: Dag): string {
  const builds = dag.inputs.map((ins, i) => `build ${stageOutput(i)}: cksum ${ins.join(' ')}`);
  return `rule cksum\n  command = cksum $in > $out\n\n${builds.join('\n')}\n`;
}

export function resetDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
