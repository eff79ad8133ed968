// Parse time of a 10,000-stage pipeline file (the bench graph's run and task forms): the values
// alone, as a run after an edit reads them (the parse cache covers an unchanged file); the whole
// load (values, schema, checks); and the first place asked for, which only a message needs.
// Run: npx tsx bench/pipeline/parse.ts [stages]   (each figure's first call is the process's first: cold)
import { performance } from 'node:perf_hooks';
import { makeDag, refineryPipeline } from '../graph/generate.ts';
import { parseLocatedYaml } from '../../src/engine/pipeline/yaml-source.ts';
import { loadPipelineText } from '../../src/engine/pipeline/load.ts';
import type { NameResolver } from '../../src/engine/pipeline/resolve-names.ts';

function timeIt(runs: number, fn: () => unknown): { first: number; median: number } {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  const first = times[0] ?? 0;
  times.sort((a, b) => a - b);
  return { first, median: times[Math.floor(times.length / 2)] ?? 0 };
}

/** Every task and schema name resolves: the bench measures parsing, not the file system. */
const resolver: NameResolver = {
  taskFile: (name) => `/bench/tasks/${name}.ts`,
  taskNames: () => ['checksum'],
  schemaFile: (name) => `/bench/schemas/${name}.schema.json`,
  schemaNames: () => [],
};

const ms = (t: number): string => `${t.toFixed(t < 100 ? 1 : 0)} ms`;
const stages = Number(process.argv[2] ?? 10_000);
const dag = makeDag(stages);
for (const kind of ['run', 'task'] as const) {
  const text = refineryPipeline(dag, kind);
  const values = timeIt(7, () => parseLocatedYaml('bench.yaml', text));
  const load = timeIt(5, () => {
    const result = loadPipelineText('/bench/pipelines/bench.yaml', text, resolver);
    if (!result.spec) throw new Error(`the ${kind} form did not load: ${result.diagnostics[0]?.message}`);
  });
  const place = timeIt(3, () => parseLocatedYaml('bench.yaml', text).spans.get(`/stages/s${stages - 1}/run`));
  console.log(
    `${kind} form, ${stages} stages, ${(text.length / 1024).toFixed(0)} KiB:\n` +
      `  values       ${ms(values.first)} first call, ${ms(values.median)} median\n` +
      `  whole load   ${ms(load.first)} first call, ${ms(load.median)} median\n` +
      `  first place  ${ms(place.first)} first call, ${ms(place.median)} median (only when a message needs one)`,
  );
}
