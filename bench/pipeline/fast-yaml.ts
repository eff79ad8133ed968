// Parse time of a 10,000-stage pipeline file: the fast subset parser (value, then the places of
// its nodes, which loading a pipeline asks for) against the yaml library (parseDocument alone, and
// the full located parse yaml-source.ts does), measured in the same run.
// Run: npx tsx bench/pipeline/fast-yaml.ts [stages]   (the run form's first call is the process's first parse: cold)
import { performance } from 'node:perf_hooks';
import { parseDocument } from 'yaml';
import { makeDag, refineryPipeline } from '../graph/generate.ts';
import { locateYamlFast, parseYamlFast } from '../../src/engine/pipeline/fast-yaml.ts';
import { parseLocatedYamlWithLibrary } from '../../src/engine/pipeline/yaml-source.ts';

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

const ms = (t: number): string => `${t.toFixed(t < 100 ? 1 : 0)} ms`;
const stages = Number(process.argv[2] ?? 10_000);
const dag = makeDag(stages);
for (const kind of ['run', 'task'] as const) {
  const text = refineryPipeline(dag, kind);
  let parsed: ReturnType<typeof parseYamlFast>;
  let located: ReturnType<typeof locateYamlFast>;
  const fast = timeIt(7, () => (parsed = parseYamlFast(text)));
  const locate = timeIt(7, () => (located = locateYamlFast(text)));
  if (!parsed || !located) throw new Error(`the ${kind} form did not take the fast path`);
  const doc = timeIt(3, () => parseDocument(text, { uniqueKeys: false }));
  const full = timeIt(3, () => parseLocatedYamlWithLibrary('bench.yaml', text));
  const fastTotal = fast.median + locate.median;
  console.log(
    `${kind} form, ${stages} stages, ${(text.length / 1024).toFixed(0)} KiB:\n` +
      `  fast value  ${ms(fast.first)} first call, ${ms(fast.median)} median; + node places ${ms(locate.first)} first, ${ms(locate.median)} median\n` +
      `  yaml        parseDocument ${ms(doc.first)} first, ${ms(doc.median)} median; located parse (value + places) ${ms(full.median)} median\n` +
      `  ratios      parseDocument / fast value = ${(doc.median / fast.median).toFixed(1)}x; located parse / (fast value + places) = ${(full.median / fastTotal).toFixed(1)}x`,
  );
}
