import { describe, expect, it } from 'vitest';
import { loadPipelineText } from '../../../src/engine/pipeline/load.ts';
import { expandPipeline } from '../../../src/engine/pipeline/expand.ts';
import { lazyRecord } from '../../../src/engine/expr/evaluate.ts';
import type { NameResolver } from '../../../src/engine/pipeline/resolve-names.ts';

const resolver: NameResolver = { taskFile: () => undefined, taskNames: () => [], schemaFile: () => undefined, schemaNames: () => [] };

function load(text: string) {
  return loadPipelineText('/p/pipelines/x.yaml', text, resolver);
}

describe('pipeline vars', () => {
  it('pipeline vars - a var whose expression fails when computed is reported at its name; the others are computed', () => {
    const loaded = load(
      [
        'pipeline: x',
        'params: { n: { type: integer, default: 3 }, width: { type: integer, default: 8 } }',
        'vars:',
        '  ok: "${params.n + 1}"',
        '  huge: "${pad(\'x\', params.width)}"',
        '  list: [a, "${vars.ok}"]',
        'stages:',
        '  a: { run: "echo ${vars.ok} ${vars.list}", outputs: { o: "out/${vars.ok}.txt" } }',
        '',
      ].join('\n'),
    );
    expect(loaded.diagnostics).toEqual([]);
    const expansion = expandPipeline(loaded.spec as NonNullable<typeof loaded.spec>, {
      root: '/p',
      params: { n: 3, width: 100_000_000 },
      artifacts: lazyRecord(() => undefined),
    });
    expect(expansion.plan.vars).toEqual({ ok: 4, huge: null, list: ['a', 4] });
    expect(expansion.plan.instances[0]?.outputs).toEqual({ o: { path: 'out/4.txt' } });
    expect(expansion.diagnostics).toEqual([
      expect.objectContaining({
        code: 'expression-failed',
        message: expect.stringMatching(/^var 'huge': /),
        span: { file: '/p/pipelines/x.yaml', line: 5, column: 3, length: 4 },
      }),
    ]);
  });

  it('pipeline vars - an unknown var in a run: block is underlined on its own line', () => {
    const loaded = load(
      [
        'pipeline: x',
        'vars: { name: world }',
        'stages:',
        '  a:',
        '    run: |',
        '      echo hello',
        '      echo ${vars.nmae} > ${outputs.o}',
        '    outputs: { o: out/a.txt }',
        '',
      ].join('\n'),
    );
    expect(loaded.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'unknown-var',
        message: "unknown var 'nmae'; did you mean 'name'?",
        span: { file: '/p/pipelines/x.yaml', line: 7, column: 14, length: 9 },
      },
    ]);
  });

  it('pipeline vars - a var reading vars whole, or a name only a stage has, is refused when the file loads', () => {
    const loaded = load(['pipeline: x', 'vars: { a: "${vars}", b: "${outputs.o}" }', 'stages:', '  a: { run: "true" }', ''].join('\n'));
    expect(loaded.diagnostics.map((d) => [d.code, d.message])).toEqual([
      ['bad-expression', "var 'a' reads vars whole; name the vars it needs (vars.NAME)"],
      ['unknown-name', "unknown name 'outputs' in expression"],
    ]);
  });
});
