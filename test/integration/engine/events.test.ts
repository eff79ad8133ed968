import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { demoProject, events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

it('events - every event of a run matches run-event.schema.json, in the JSONL file and on --json', async () => {
  project = demoProject();
  project.write(
    'tasks/noisy.ts',
    `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'noisy', params: z.object({}), async run(ctx) {
  ctx.log('hello'); ctx.progress(0.5, 'half'); ctx.report({ kind: 'warning', message: 'careful' });
  await writeFile(ctx.outputs.o, 'x');
} });
`,
  );
  project.write(
    'pipelines/demo.yaml',
    `${readFileSync(project.path('pipelines/demo.yaml'), 'utf8')}  n:\n    task: noisy\n    outputs: { o: out/n.txt }\n  f:\n    run: "exit 1"\n    needs: [n]\n`,
  );
  const result = await runCli(['run', 'demo', '--json', '-k'], { cwd: project.root });
  expect(result.code).toBe(1);
  const registry = new SchemaRegistry(project.root);
  const printed = events(result.stdout);
  expect(new Set(printed.map((e) => e.type))).toEqual(
    new Set(['run-start', 'stage-start', 'stage-log', 'stage-progress', 'stage-report', 'stage-end', 'run-end']),
  );
  for (const e of printed) expect(registry.validate('run-event', e), JSON.stringify(e)).toEqual({ ok: true });
  const runs = readdirSync(project.path('.refinery/runs'));
  const logged = readFileSync(path.join(project.path('.refinery/runs'), runs[0] as string, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(logged).toEqual(printed);
  expect(registry.validate('run-event', { type: 'stage-end', runId: 'r', pipeline: 'p', time: 'now' }).ok).toBe(false);
});

it('junit - a test case per stage; failures carry the reason and schema errors', async () => {
  project = tempProject({
    'schemas/n.schema.json': JSON.stringify({ type: 'object', required: ['n'] }),
    'pipelines/p.yaml': `pipeline: p
stages:
  ok: { run: "echo '{\\"n\\": 1}' > \${outputs.o}", outputs: { o: { path: out/ok.json, schema: n } } }
  bad: { run: "echo '{}' > \${outputs.o}", outputs: { o: { path: out/bad.json, schema: n } } }
  crash: { run: "echo boom >&2; exit 4", outputs: { o: out/c } }
`,
  });
  const result = await runCli(['run', 'p', '-k', '--junit', 'reports/junit.xml'], { cwd: project.root });
  expect(result.code).toBe(1);
  const xml = readFileSync(project.path('reports/junit.xml'), 'utf8');
  expect(xml).toContain('<testsuite name="p" tests="3" failures="2" skipped="0"');
  expect(xml).toMatch(/<testcase classname="p" name="ok" time="[\d.]+">\s*<system-out>succeeded<\/system-out>/);
  expect(xml).toMatch(
    /name="bad"[^>]*>\s*<failure type="invalid-artifact" message="output &apos;o&apos; \(out\/bad.json\) is missing required property &apos;n&apos;/,
  );
  expect(xml).toMatch(/name="crash"[^>]*>\s*<failure type="stage-failed" message="command failed with exit code 4: boom"/);
});

it('status - shows the last runs and each stage that succeeded', async () => {
  project = demoProject();
  await runCli(['run', 'demo'], { cwd: project.root });
  const result = await runCli(['status'], { cwd: project.root });
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/Last runs:\n {2}\S+ {2}demo {2}succeeded {2}[\d.]+s {2}\(2 succeeded\)/);
  expect(result.stdout).toContain('Pipeline demo: 2 stages with a recorded success');
});

it('plan and why - say what would run and why, without running it', async () => {
  project = demoProject();
  await runCli(['run', 'demo'], { cwd: project.root });
  project.write('src/a.txt', 'changed\n');
  const plan = await runCli(['plan', 'demo'], { cwd: project.root });
  expect(plan.stdout).toBe(
    'run    a  (input src/a.txt changed)\nrun?   b  (runs only if upstream a writes different output)\n\n1 of 2 stages would run; 1 more only if upstream output changes.\n',
  );
  const why = await runCli(['why', 'demo', 'a'], { cwd: project.root });
  expect(why.stdout).toBe('a would run:\n  - input src/a.txt changed\n');
  expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('alpha\nhello\n');
});

it("plan - a stage whose upstream would fail is not judged by its own inputs (they may be that stage's outputs)", async () => {
  project = demoProject();
  rmSync(project.path('src/a.txt'));
  const plan = await runCli(['plan', 'demo'], { cwd: project.root });
  expect(plan.stdout).toBe(
    'fail   a  (input src/a.txt does not exist, and no stage writes it)\nfail   b  (not started: upstream a would fail)\n\n0 of 2 stages would run.\n',
  );
  // What the run then does: b is not started.
  const run = await runCli(['run', 'demo', '--json'], { cwd: project.root });
  expect(stageEnds(run.stdout)).toEqual({ a: 'failed', b: 'blocked' });
});

it('plan and run - an input missing because its upstream was skipped says so', async () => {
  project = tempProject({
    'pipelines/s.yaml': `pipeline: s
stages:
  a: { run: "echo a > \${outputs.o}", when: "false", outputs: { o: out/a.txt } }
  b: { run: "cat out/a.txt > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/b.txt } }
`,
  });
  const reason = 'input out/a.txt does not exist: upstream a was skipped, and no other stage writes it';
  expect((await runCli(['plan', 's'], { cwd: project.root })).stdout).toContain(`fail   b  (${reason})`);
  const run = await runCli(['run', 's', '--json'], { cwd: project.root });
  const end = events(run.stdout).find((e) => e.type === 'stage-end' && e.stage === 'b');
  expect(end).toMatchObject({ status: 'failed', code: 'missing-input', reason });
});

it('graph - mermaid, dot and json', async () => {
  project = demoProject();
  const mermaid = await runCli(['graph', 'demo'], { cwd: project.root });
  expect(mermaid.stdout).toBe('flowchart LR\n  n0["a"]\n  n1("b (copy-json)")\n  n0 --> n1\n');
  const dot = await runCli(['graph', 'demo', '--format', 'dot'], { cwd: project.root });
  expect(dot.stdout).toContain('"a" -> "b";');
  const json = JSON.parse((await runCli(['graph', 'demo', '--format', 'json'], { cwd: project.root })).stdout) as { edges: string[][] };
  expect(json.edges).toEqual([['a', 'b']]);
});

it('validate - exit 0 for a valid file, 1 with located errors for an invalid one', async () => {
  project = demoProject();
  project.write('good.json', '{"lines": ["a"]}');
  project.write('bad.json', '{"lines": [1], "x": true}');
  expect((await runCli(['validate', 'good.json', '--schema', 'demo-report'], { cwd: project.root })).code).toBe(0);
  const bad = await runCli(['validate', 'bad.json', '--schema', 'demo-report'], { cwd: project.root });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toBe('bad.json:/lines/0: must be string\n');
  const missing = await runCli(['validate', 'good.json', '--schema', 'nope'], { cwd: project.root });
  expect(missing.code).toBe(2);
});

it('task - runs one task alone with params and an output path', async () => {
  project = demoProject();
  const result = await runCli(['task', 'copy-json', '--param', 'from=src/a.txt', '--output', 'report=out/alone.json'], {
    cwd: project.root,
  });
  expect(result.code, result.stderr).toBe(0);
  expect(JSON.parse(readFileSync(project.path('out/alone.json'), 'utf8'))).toEqual({ lines: ['alpha'] });
});

it('config errors - exit 2, located, and nothing runs', async () => {
  project = demoProject();
  project.write(
    'pipelines/demo.yaml',
    readFileSync(project.path('pipelines/demo.yaml'), 'utf8').replace('needs: [a]', 'needs: [a, ghost]'),
  );
  const result = await runCli(['run', 'demo'], { cwd: project.root });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("pipelines/demo.yaml:14:16 error: needs unknown stage 'ghost'");
  expect(() => readdirSync(project!.path('out'))).toThrow();
});

it('expansion errors - located at the stage on a first run and from the parse cache alike', async () => {
  project = tempProject({
    'pipelines/p.yaml': `pipeline: p
params:
  dir: { type: string, default: out }
stages:
  a:
    run: "echo x > \${outputs.o}"
    outputs: { o: "\${params.dir}/a.txt" }
`,
  });
  for (const pass of ['parsed', 'cached']) {
    const result = await runCli(['run', 'p', '--param', 'dir=..'], { cwd: project.root });
    expect(result.code, pass).toBe(2);
    expect(result.stderr, pass).toContain("pipelines/p.yaml:5:3 error: stage 'a': output 'o' resolves to '../a.txt', outside the project");
  }
  expect(readdirSync(project.path('.refinery/cache/pipelines'))).toHaveLength(1);
});
