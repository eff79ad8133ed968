import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const WHEN_PIPELINE = `pipeline: w
params:
  on: { type: boolean, default: false }
stages:
  a:
    run: "echo '{}' > \${outputs.o}"
    outputs: { o: out/a.json }
  b:
    run: "echo b > \${outputs.o}"
    needs: [a]
    when: "artifacts.a.o.x == 1"
    outputs: { o: out/b.txt }
  c:
    run: "echo c > \${outputs.o}"
    when: "params.on"
    outputs: { o: out/c.txt }
`;

describe('what a new user meets first', () => {
  it('plan - a stage whose when reads artifacts not yet written is shown as run?, not as run', async () => {
    project = tempProject({ 'pipelines/w.yaml': WHEN_PIPELINE });
    const plan = await runCli(['plan', 'w'], { cwd: project.root });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^run\? +b +\(when: decided once upstream a has run\)$/m);
    expect(plan.stdout).toContain('1 of 3 stages would run; 1 more if its when holds.');
    const run = await runCli(['run', 'w'], { cwd: project.root });
    expect(run.stdout).toMatch(/- b +skipped: when: condition is false/);
  });

  it('run --junit - a stage skipped by its when stays skipped in a no-op run', async () => {
    project = tempProject({ 'pipelines/w.yaml': WHEN_PIPELINE });
    expect((await runCli(['run', 'w'], { cwd: project.root })).code).toBe(0);
    const noop = await runCli(['run', 'w', '--junit', 'j.xml'], { cwd: project.root });
    expect(noop.code).toBe(0);
    expect(noop.stdout).toContain('1 up to date, 2 skipped');
    const junit = readFileSync(project.path('j.xml'), 'utf8');
    for (const stage of ['b', 'c']) expect(junit).toMatch(new RegExp(`name="${stage}"[^>]*>\\s*<skipped `));
    expect(junit).toMatch(/name="a"[^>]*>\s*<system-out>up to date/);
  });

  it('run - a binary file is one line saying it is not a text file', async () => {
    project = tempProject();
    // What a program file looks like: an ELF header, NULs, control bytes, invalid UTF-8.
    const bytes = Buffer.alloc(64 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00]).copy(bytes);
    writeFileSync(project.path('node-binary'), bytes);
    const result = await runCli(['run', 'node-binary'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('node-binary: not a text file (binary or not UTF-8)');
    expect(result.stderr.split('\n').filter((l) => l.includes('error:')).length).toBe(1);
    expect(result.stderr.length).toBeLessThan(500);
    expect(result.stderr).not.toMatch(/[\u0000-\u0008\u001b]/);
  });

  it('run - an unknown pipeline name gets a did-you-mean; a missing path is named as a file', async () => {
    project = tempProject({ 'pipelines/w.yaml': WHEN_PIPELINE });
    const typo = await runCli(['run', 'ww'], { cwd: project.root });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("no pipeline 'ww'; did you mean 'w'?");
    const missing = await runCli(['run', '/abs/missing.yaml'], { cwd: project.root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no pipeline file /abs/missing.yaml: no such file');
    expect(missing.stderr).not.toContain('.yaml.yaml');
  });

  it('run - an unknown pipeline name with no near match lists the pipelines there are', async () => {
    project = tempProject({ 'pipelines/w.yaml': WHEN_PIPELINE });
    const result = await runCli(['run', 'nothing-like-it'], { cwd: project.root });
    expect(result.code).toBe(2);
    // The project's and refinery's own, by name.
    expect(result.stderr).toMatch(/no pipeline 'nothing-like-it'; the pipelines are: (.+, )?analyze, (.+, )?w\b/);
  });

  it("run - no pipeline named in a folder without one: refinery's own are listed, and init", async () => {
    project = tempProject();
    const result = await runCli(['run'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "name a pipeline: none in this folder (no pipelines/); refinery's own: analyze, experiments, refine, self-analysis; `npx refinery init` writes a starter",
    );
  });

  it('why, validate, task, refine - a missing argument is named on the first line, before the usage', async () => {
    project = tempProject({ 'pipelines/w.yaml': WHEN_PIPELINE });
    const cases: Array<[string[], string]> = [
      [['why', 'w'], 'refinery why: name the stage to explain. Stages: a, c, b'],
      [['validate', 'x.json'], 'refinery validate: missing --schema NAME, the schema to validate against'],
      [['validate', '--schema', 'x'], 'refinery validate: name the FILE to validate'],
      [['task'], 'refinery task: name the task to run'],
      [['refine'], 'refinery refine: missing subcommand'],
    ];
    for (const [args, first] of cases) {
      const result = await runCli(args, { cwd: project.root });
      expect(result.code).toBe(2);
      const lines = result.stderr.split('\n');
      expect(lines[0]).toBe(first);
      expect(lines[1]).toMatch(/^Usage:/);
    }
  });

  it('-C - a folder that does not exist is named', async () => {
    project = tempProject();
    const result = await runCli(['-C', project.path('nope'), 'status'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`-C ${project.path('nope')}: no such folder`);
  });

  it('status - started in a subfolder, it finds the project root as git and npm do', async () => {
    project = tempProject({ 'pipelines/w.yaml': WHEN_PIPELINE });
    expect((await runCli(['run', 'w'], { cwd: project.root })).code).toBe(0);
    const sub = project.path('deep/er');
    mkdirSync(sub, { recursive: true });
    const status = await runCli(['status'], { cwd: sub });
    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain('No runs yet');
    expect(status.stdout).toContain('w');
    const again = await runCli(['run', 'w'], { cwd: sub });
    expect(again.stdout).toContain('1 up to date, 2 skipped');
    expect(path.relative(project.root, sub)).toBe(path.join('deep', 'er'));
  });
});
