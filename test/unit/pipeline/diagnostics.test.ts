import { describe, expect, it } from 'vitest';
import { loadPipelineText } from '../../../src/engine/pipeline/load.ts';
import { formatDiagnostics } from '../../../src/engine/diagnostics/format.ts';
import type { NameResolver } from '../../../src/engine/pipeline/resolve-names.ts';
import { resolveParams } from '../../../src/engine/pipeline/params.ts';
import { sortDiagnostics } from '../../../src/engine/diagnostics/format.ts';

const resolver: NameResolver = {
  taskFile: (n) => (n === 'copy-json' ? '/x/tasks/copy-json.ts' : undefined),
  taskNames: () => ['analyze-turn', 'copy-json'],
  schemaFile: (n) => (n === 'demo-report' ? '/x/schemas/demo-report.schema.json' : undefined),
  schemaNames: () => ['demo-report', 'turn-analysis'],
};

function report(text: string): string {
  const result = loadPipelineText('/p/pipelines/x.yaml', text, resolver);
  return formatDiagnostics(result.diagnostics, { sources: new Map([['/p/pipelines/x.yaml', text]]), color: false, cwd: '/p' });
}

describe('pipeline diagnostics', () => {
  it('diagnostics - an unknown key, underlined, with did-you-mean and the allowed keys', () => {
    expect(report('pipeline: x\nstages:\n  a:\n    run: "true"\n    ouputs: { o: out/o }\n')).toBe(
      [
        "pipelines/x.yaml:5:5 error: unknown key 'ouputs'; did you mean 'outputs'?",
        '  5 |     ouputs: { o: out/o }',
        '    |     ^^^^^^',
        '  = allowed here: description, task, run, with, inputs, outputs, needs, foreach, as, when, pool, timeout, retries, retry_backoff, env, loop, stale_if, final_if, local',
        '',
        '1 error found; nothing was run.',
        '',
      ].join('\n'),
    );
  });

  it('diagnostics - final_if: a misspelt name and a loop stage with one, both located', () => {
    const text =
      'pipeline: x\nstages:\n  a:\n    run: "true"\n    outputs: { o: out/o.json }\n    final_if: "slef.o.done"\n' +
      '  l:\n    loop:\n      max: 2\n      stages:\n        b: { run: "true" }\n    final_if: "true"\n';
    const out = report(text);
    expect(out).toContain("pipelines/x.yaml:6:15 error: unknown name 'slef' in expression; did you mean 'self'?");
    expect(out).toContain("pipelines/x.yaml:12:5 error: a loop stage takes no 'final_if'; put it on the stages inside the loop");
    expect(out).toContain('2 errors found; nothing was run.');
  });

  it('diagnostics - every error of the file at once, sorted by place', () => {
    const text = [
      'pipeline: x',
      'stages:',
      '  a:',
      '    task: copy-jsn',
      '    outputs: { r: { path: ../escape.json, schema: demo-reprot } }',
      '    needs: [bb]',
      '  b:',
      '    run: "echo ${params.nope}"',
      '    timeout: soon',
      '  b2:',
      '    run: "echo ${1 +}"',
      '',
    ].join('\n');
    const lines = report(text)
      .split('\n')
      .filter((l) => /^pipelines\//.test(l));
    expect(lines).toEqual([
      "pipelines/x.yaml:4:11 error: unknown task 'copy-jsn'; did you mean 'copy-json'?",
      "pipelines/x.yaml:5:27 error: output '../escape.json' is outside the project; outputs must be paths inside the project root",
      "pipelines/x.yaml:5:51 error: unknown schema 'demo-reprot'; did you mean 'demo-report'?",
      "pipelines/x.yaml:6:13 error: needs unknown stage 'bb'; did you mean 'b'?",
      "pipelines/x.yaml:8:10 error: unknown param 'nope'; declare it under params:",
      'pipelines/x.yaml:9:14 error: stages.b.timeout: expected a duration such as 500ms, 30s, 5m or 1h',
      'pipelines/x.yaml:11:21 error: bad expression: unexpected end of expression',
    ]);
  });

  it('diagnostics - a stage with a key typo is still checked for its task, needs and params', () => {
    const text = [
      'pipeline: x',
      'params: { count: { type: string } }',
      'stages:',
      '  a:',
      '    task: word-cuont',
      '    outptus: { a: out/a.txt }',
      '    with: { x: "${params.shuot}" }',
      '    needs: [cuont]',
      '',
    ].join('\n');
    const lines = report(text)
      .split('\n')
      .filter((l) => /^pipelines\//.test(l));
    expect(lines).toEqual([
      "pipelines/x.yaml:5:11 error: unknown task 'word-cuont'",
      "pipelines/x.yaml:6:5 error: unknown key 'outptus'; did you mean 'outputs'?",
      "pipelines/x.yaml:7:16 error: unknown param 'shuot'; declare it under params:",
      "pipelines/x.yaml:8:13 error: needs unknown stage 'cuont'",
    ]);
  });

  it('diagnostics - a cycle is printed as its full path at the first stage', () => {
    const text = [
      'pipeline: x',
      'stages:',
      '  c: { run: "true", inputs: [out/e], outputs: { o: out/c } }',
      '  d: { run: "true", inputs: [out/c], outputs: { o: out/d } }',
      '  e: { run: "true", needs: [d], outputs: { o: out/e } }',
      '',
    ].join('\n');
    expect(report(text)).toBe(
      [
        'pipelines/x.yaml:3:3 error: dependency cycle: c -> d -> e -> c',
        '  3 |   c: { run: "true", inputs: [out/e], outputs: { o: out/c } }',
        '    |   ^',
        "  = remove one of these needs, or one of the inputs that is another stage's output",
        '',
        '1 error found; nothing was run.',
        '',
      ].join('\n'),
    );
  });

  it('diagnostics - YAML syntax errors are located', () => {
    expect(report('pipeline: x\nstages:\n  a: { run: "x"\n')).toMatch(/^pipelines\/x\.yaml:\d+:\d+ error: YAML: /);
  });

  it('diagnostics - duplicate keys, two writers of one output, an unknown param', () => {
    const text = [
      'pipeline: x',
      'params:',
      '  name: { type: string, default: 3 }',
      'stages:',
      '  a: { run: "echo ${params.nmae}", outputs: { o: out/same } }',
      '  b: { run: "true", outputs: { o: out/same } }',
      '',
    ].join('\n');
    const lines = report(text)
      .split('\n')
      .filter((l) => /^pipelines\//.test(l));
    expect(lines).toEqual([
      "pipelines/x.yaml:3:34 error: default of param 'name' is not a string",
      "pipelines/x.yaml:5:13 error: unknown param 'nmae'; did you mean 'name'?",
      "pipelines/x.yaml:6:35 error: stages 'a' and 'b' both write 'out/same'; each output needs one writer",
    ]);
    expect(report('pipeline: x\nstages:\n  a: { run: "true" }\n  a: { run: "true" }\n')).toMatch(
      /^pipelines\/x\.yaml:4:3 error: YAML: Map keys must be unique/,
    );
  });

  it('diagnostics - each carries a code to match instead of its words', () => {
    const codes = (text: string): string[] =>
      sortDiagnostics(loadPipelineText('/p/pipelines/x.yaml', text, resolver).diagnostics).map((d) => d.code);
    const everything = [
      'pipeline: x',
      'params:',
      '  name: { type: string, default: 3 }',
      'stages:',
      '  a:',
      '    task: copy-jsn',
      '    outputs: { r: { path: ../escape.json, schema: demo-reprot } }',
      '    needs: [bb]',
      '  b:',
      '    run: "echo ${params.nope} ${nothing}"',
      '    timeout: soon',
      '    pool: gpu',
      '    outputs: { o: .refinery/state/x }',
      '  b2:',
      '    run: "echo ${1 +}"',
      '    ouputs: {}',
      '  c: { run: "true", outputs: { o: out/same } }',
      '  d: { run: "true", outputs: { o: out/same } }',
      '',
    ].join('\n');
    expect(codes(everything)).toEqual([
      'invalid-param-default',
      'unknown-task',
      'output-outside-project',
      'unknown-schema',
      'unknown-stage',
      'unknown-name',
      'unknown-param',
      'invalid-value',
      'unknown-pool',
      'output-in-refinery-folder',
      'bad-expression',
      'unknown-key',
      'duplicate-output',
    ]);
    expect(codes('pipeline: x\nstages:\n  a: { run: "true", needs: [b] }\n  b: { run: "true", needs: [a] }\n')).toEqual([
      'dependency-cycle',
    ]);
    expect(codes('pipeline: x\nstages:\n  a: { run: "x"\n')).toContain('yaml-syntax');
    expect(codes('pipeline: x\nstages:\n  a: { run: "true" }\n  a: { run: "true" }\n')).toEqual(['duplicate-key']);
    expect(codes('pipeline: x\nstages:\n  a: { run: "true", task: copy-json }\n  1b: { run: "true" }\n')).toEqual([
      'stage-kind',
      'invalid-stage-name',
    ]);
    expect(codes('- a\n')).toEqual(['not-a-mapping']);
  });

  it('resolveParams - an unknown, a malformed and a missing param each have their code', () => {
    const spec = loadPipelineText(
      '/p/x.yaml',
      'pipeline: x\nparams:\n  n: { type: integer }\n  mode: { type: string, enum: [a, b], default: a }\nstages:\n  a: { run: "true" }\n',
      resolver,
    ).spec;
    if (!spec) throw new Error('the pipeline should load');
    expect(resolveParams(spec, { nn: '1' }).diagnostics.map((d) => d.code)).toEqual(['unknown-param', 'missing-param']);
    expect(resolveParams(spec, { n: 'one', mode: 'c' }).diagnostics.map((d) => d.code)).toEqual([
      'invalid-param',
      'invalid-param',
      'missing-param',
    ]);
  });

  it('diagnostics - a valid pipeline has none', () => {
    const result = loadPipelineText(
      '/p/x.yaml',
      'pipeline: x\nstages:\n  a: { task: copy-json, outputs: { r: { path: out/r.json, schema: demo-report } } }\n',
      resolver,
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.spec?.stages.map((s) => s.id)).toEqual(['a']);
  });
});
