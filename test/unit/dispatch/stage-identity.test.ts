import { describe, expect, it } from 'vitest';
import { loadPipelineText } from '../../../src/engine/pipeline/load.ts';
import { expandPipeline } from '../../../src/engine/pipeline/expand.ts';
import { lazyRecord } from '../../../src/engine/expr/evaluate.ts';
import type { NameResolver } from '../../../src/engine/pipeline/resolve-names.ts';
import { definitionHash } from '../../../src/engine/dispatch/stage-identity.ts';
import { stableJson } from '../../../src/engine/executor/fingerprint.ts';
import { digest } from '../../../src/engine/state/hash-file.ts';

const resolver: NameResolver = { taskFile: () => undefined, taskNames: () => [], schemaFile: () => undefined, schemaNames: () => [] };

function instances(text: string) {
  const loaded = load(text);
  return expandPipeline(loaded, { root: '/p', params: {}, artifacts: lazyRecord(() => undefined) }).plan.instances;
}

function load(text: string) {
  const loaded = loadPipelineText('/p/pipelines/x.yaml', text, resolver);
  expect(loaded.diagnostics).toEqual([]);
  return loaded.spec as NonNullable<typeof loaded.spec>;
}

const PIPELINE = [
  'pipeline: x',
  'stages:',
  '  nap:',
  '    description: naps',
  '    foreach: [1, 2, 3]',
  '    run: "sleep 0 && echo ${item} > ${outputs.o}"',
  '    outputs: { o: "out/nap-${item}.txt" }',
  '',
].join('\n');

describe('definitionHash', () => {
  it('definitionHash - each foreach instance hashes the stable JSON of its spec, inputs, outputs, needs and vars', () => {
    for (const inst of instances(PIPELINE)) {
      const { description: _d, ...spec } = inst.spec;
      expect(definitionHash(inst)).toBe(
        digest(stableJson({ spec, inputs: inst.inputs, outputs: inst.outputs, needs: inst.needs, vars: inst.vars })),
      );
    }
  });

  it('definitionHash - instances of one stage differ by their item; a changed command changes them all', () => {
    const before = instances(PIPELINE).map(definitionHash);
    expect(new Set(before).size).toBe(3);
    const after = instances(PIPELINE.replace('sleep 0', 'sleep 1')).map(definitionHash);
    expect(after.some((h) => before.includes(h))).toBe(false);
    expect(instances(PIPELINE.replace('naps', 'long naps')).map(definitionHash)).toEqual(before);
  });
});
