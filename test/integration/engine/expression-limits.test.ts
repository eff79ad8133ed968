import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

/** The inputs of the security review (issue #10), each with where its error is and what it says. */
const BAD_EXPRESSIONS: Array<{ expr: string; offset: number | 'value'; message: RegExp }> = [
  { expr: 'constructor(params.p)', offset: 0, message: /^unknown function 'constructor'; the functions are basename, contains, / },
  { expr: 'toString()', offset: 0, message: /^unknown function 'toString'/ },
  { expr: '__proto__()', offset: 0, message: /^unknown function '__proto__'/ },
  { expr: 'valueOf()', offset: 0, message: /^unknown function 'valueOf'/ },
  { expr: 'hasOwnProperty(1)', offset: 0, message: /^unknown function 'hasOwnProperty'/ },
  { expr: `${'('.repeat(800)}1${')'.repeat(800)}`, offset: 100, message: /^expression nested too deeply \(more than 100 levels/ },
  { expr: Array.from({ length: 5000 }, () => '1').join('+'), offset: 199, message: /^expression nested too deeply/ },
  { expr: `${'!'.repeat(100_000)}1`, offset: 0, message: /^expression is 100001 characters long; the limit is 10000$/ },
  { expr: "pad('x', 600000000)", offset: 'value', message: /^pad\(\) to 600000000 characters; the limit is 1048576$/ },
  { expr: "pad('x', 100000000)", offset: 'value', message: /^pad\(\) to 100000000 characters; the limit is 1048576$/ },
  { expr: `a${'-'.repeat(100_000)}b`, offset: 0, message: /^expression is 100002 characters long/ },
];

function badPipeline(): string {
  const stages = BAD_EXPRESSIONS.map((b, i) => `  s${i}:\n    run: "echo \${${b.expr}}"\n`).join('');
  return `pipeline: bad\nparams:\n  p: { type: string, default: x }\nstages:\n${stages}`;
}

/** Each stage's `run:` is on line 6 + 2i; the value's quote is in column 10 and `echo ${` is 7 characters. */
function expectedHeads(): Array<{ head: string; message: RegExp }> {
  return BAD_EXPRESSIONS.map((b, i) => ({
    head: `pipelines/bad.yaml:${6 + 2 * i}:${b.offset === 'value' ? 10 : 18 + b.offset} error: bad expression: `,
    message: b.message,
  }));
}

function emptyEventLogs(root: string): string[] {
  const runs = path.join(root, '.refinery', 'runs');
  if (!existsSync(runs)) return [];
  return readdirSync(runs)
    .map((r) => path.join(runs, r, 'events.jsonl'))
    .filter((f) => !existsSync(f) || readFileSync(f, 'utf8') === '');
}

describe('expressions the security review found', () => {
  it('plan and run - each bad expression is a located, underlined error with exit 2, and nothing runs', async () => {
    project = tempProject({ 'pipelines/bad.yaml': badPipeline() });
    for (const command of ['plan', 'run']) {
      const result = await runCli([command, 'bad'], { cwd: project.root });
      expect(result.code, `${command}: ${result.stderr.slice(0, 2000)}`).toBe(2);
      expect(result.stderr).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
      const lines = result.stderr.split('\n');
      const heads = lines.filter((l) => l.startsWith('pipelines/bad.yaml:'));
      const expected = expectedHeads();
      expect(heads).toHaveLength(expected.length);
      heads.forEach((line, i) => {
        const { head, message } = expected[i] as { head: string; message: RegExp };
        expect(line.startsWith(head), `${line.slice(0, 200)} should start with ${head}`).toBe(true);
        expect(line.slice(head.length)).toMatch(message);
        // The source line, then the underline under the place.
        const column = Number.parseInt(head.split(':')[2] as string, 10);
        expect(lines[lines.indexOf(line) + 2]).toMatch(new RegExp(`^\\s+\\| {${column}}\\^+$`));
      });
      expect(result.stderr).toContain(`${expected.length} errors found; nothing was run.`);
      expect(emptyEventLogs(project.root)).toEqual([]);
      expect(existsSync(project.path('.refinery/runs'))).toBe(false);
    }
  });

  it('run - expressions over artifacts that fail are failed stages with the reason, and the event log is complete', async () => {
    project = tempProject({
      'src/a.json': JSON.stringify({ n: 100_000_000 }),
      'src/deep.json': `${'['.repeat(200_000)}${']'.repeat(200_000)}`,
      'pipelines/late.yaml': [
        'pipeline: late',
        'params:',
        '  n: { type: number, default: 1e8 }',
        'stages:',
        '  a: { run: "cp src/a.json ${outputs.o}", inputs: [src/a.json], outputs: { o: out/a.json } }',
        '  deep: { run: "cp src/deep.json ${outputs.o}", inputs: [src/deep.json], outputs: { o: out/deep.json } }',
        '  padded: { run: "echo ${pad(\'x\', artifacts.a.o.n)} > ${outputs.o}", needs: [a], outputs: { o: out/padded.txt } }',
        '  nested: { run: "echo ${artifacts.deep.o} > ${outputs.o}", needs: [deep], outputs: { o: out/nested.txt } }',
        '  proto: { run: "echo [${artifacts.a.constructor}${artifacts.a.__proto__}] > ${outputs.o}", needs: [a], outputs: { o: out/proto.txt } }',
        '  param: { run: "echo ${pad(\'x\', params.n)} > ${outputs.o}", outputs: { o: out/param.txt } }',
        '',
      ].join('\n'),
    });
    const result = await runCli(['run', 'late', '-k', '-j', '1', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/\n\s+at .*\(.*:\d+:\d+\)/);
    expect(stageEnds(result.stdout)).toEqual({
      a: 'succeeded',
      deep: 'succeeded',
      padded: 'failed',
      nested: 'failed',
      proto: 'succeeded',
      param: 'failed',
    });
    const reasons = Object.fromEntries(
      events(result.stdout)
        .filter((e) => e.type === 'stage-end')
        .map((e) => [e.stage, e.reason]),
    );
    const codes = Object.fromEntries(
      events(result.stdout)
        .filter((e) => e.type === 'stage-end')
        .map((e) => [e.stage, e.code]),
    );
    expect(codes).toMatchObject({ padded: 'expression-failed', param: 'expression-failed', nested: 'expression-failed', a: 'ran' });
    expect(reasons.padded).toBe('pad() to 100000000 characters; the limit is 1048576');
    expect(reasons.param).toBe('pad() to 100000000 characters; the limit is 1048576');
    expect(reasons.nested).toMatch(/^a value is too large or too deeply nested to evaluate/);
    expect(readFileSync(project.path('out/proto.txt'), 'utf8')).toBe('[]\n');
    expect(existsSync(project.path('out/padded.txt'))).toBe(false);

    const [runDir] = readdirSync(project.path('.refinery/runs'));
    const logged = readFileSync(project.path(`.refinery/runs/${runDir}/events.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logged.at(-1)).toMatchObject({ type: 'run-end', status: 'failed', counts: { succeeded: 3, failed: 3 } });

    const plan = await runCli(['plan', 'late', '--json'], { cwd: project.root });
    // Stages that would fail: plan says so with exit 1.
    expect(plan.code, plan.stderr).toBe(1);
    const decisions = Object.fromEntries(
      (JSON.parse(plan.stdout) as Array<{ id: string; decision: string; reasons: string[] }>).map((e) => [
        e.id,
        [e.decision, e.reasons.join('; ')],
      ]),
    );
    expect(decisions.padded).toEqual(['fail', 'pad() to 100000000 characters; the limit is 1048576']);
    expect(decisions.param).toEqual(['fail', 'pad() to 100000000 characters; the limit is 1048576']);
    expect(decisions.nested?.[0]).toBe('fail');
    expect(decisions.proto).toEqual(['fresh', 'up to date']);
  });
});
