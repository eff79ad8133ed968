import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoProject, events, runCli, stageEnds, startCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
const scratch: string[] = [];

afterEach(() => {
  project?.cleanup();
  project = undefined;
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder outside the project, removed after the test. */
function outsideDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-outside-'));
  scratch.push(dir);
  return dir;
}

type StageEnd = { stage: string; status: string; code: string; reason?: string; rejectedDir?: string };

function stageEnd(stdout: string, stage: string): StageEnd {
  const end = events(stdout).find((e) => e.type === 'stage-end' && e.stage === stage);
  if (!end) throw new Error(`no stage-end for ${stage} in:\n${stdout}`);
  return end as unknown as StageEnd;
}

describe('foreach instances whose keys slug alike', () => {
  const pipeline = (schema: boolean) => `pipeline: p
stages:
  s:
    foreach: { glob: "d/*", type: dir }
    # Both instances write before either finishes, as they would at -j 2 by chance.
    run: "cat \${item.path}/in.txt > \${outputs.o}; touch \${item.path}/written; until [ -e 'd/a b/written' ] && [ -e d/a_b/written ]; do sleep 0.01; done"
    timeout: 20s
    inputs: ["\${item.path}/in.txt"]
    outputs: { o: ${schema ? '{ path: "${item.path}/out.json", schema: strict }' : '"${item.path}/out.txt"'} }
`;

  it('foreach - items `a b` and `a_b` each publish their own output', async () => {
    project = tempProject({ 'd/a b/in.txt': 'space\n', 'd/a_b/in.txt': 'underscore\n', 'pipelines/p.yaml': pipeline(false) });
    const result = await runCli(['run', 'p', '--json', '-j', '2'], { cwd: project.root });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({ 's[a b]': 'succeeded', 's[a_b]': 'succeeded' });
    expect(readFileSync(project.path('d/a b/out.txt'), 'utf8')).toBe('space\n');
    expect(readFileSync(project.path('d/a_b/out.txt'), 'utf8')).toBe('underscore\n');
  });

  it('foreach - rejected outputs of items `a b` and `a_b` go to folders of their own', async () => {
    project = tempProject({
      'd/a b/in.txt': '{"who":"space"}',
      'd/a_b/in.txt': '{"who":"underscore"}',
      'schemas/strict.schema.json': JSON.stringify({ type: 'object', required: ['never'] }),
      'pipelines/p.yaml': pipeline(true),
    });
    const result = await runCli(['run', 'p', '--json', '-k', '-j', '2'], { cwd: project.root });
    expect(result.code).toBe(1);
    const space = stageEnd(result.stdout, 's[a b]');
    const underscore = stageEnd(result.stdout, 's[a_b]');
    expect(space.status).toBe('failed');
    expect(underscore.status).toBe('failed');
    expect(space.rejectedDir).toBeDefined();
    expect(space.rejectedDir).not.toBe(underscore.rejectedDir);
    expect(readFileSync(project.path(`${space.rejectedDir}/o/out.json`), 'utf8')).toBe('{"who":"space"}');
    expect(readFileSync(project.path(`${underscore.rejectedDir}/o/out.json`), 'utf8')).toBe('{"who":"underscore"}');
  });
});

describe('foreach items with one key', () => {
  it('foreach - two items with the same key are a located error and nothing runs', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
params:
  items: { type: list, default: [{ name: x, v: one }, { name: x, v: two }] }
stages:
  s:
    foreach: "\${params.items}"
    run: "echo \${item.v} > \${outputs.o}"
    outputs: { o: "out/\${item.v}.txt" }
`,
    });
    const result = await runCli(['run', 'p'], { cwd: project.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("pipelines/p.yaml:5:3 error: stage 's': two foreach items have the key 'x'");
    expect(existsSync(project.path('out'))).toBe(false);
  }, 20_000);
});

describe('outputs under symlinked folders', () => {
  it('outputs - an output under a symlink to a folder outside the project is refused and nothing is written there', async () => {
    const outside = outsideDir();
    writeFileSync(path.join(outside, 'f.txt'), 'precious\n');
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  direct: { run: "echo pwned > \${outputs.o}", outputs: { o: linkdir/f.txt } }
  nested: { run: "echo pwned > \${outputs.o}", outputs: { o: linkdir/sub/g.txt } }
`,
    });
    symlinkSync(outside, project.path('linkdir'), 'dir');
    const result = await runCli(['run', 'p', '--json', '-k'], { cwd: project.root });
    expect(result.code).toBe(1);
    for (const stage of ['direct', 'nested']) {
      const end = stageEnd(result.stdout, stage);
      expect(end).toMatchObject({ status: 'failed', code: 'output-outside-project' });
      expect(end.reason).toContain('linkdir');
      expect(end.reason).not.toMatch(/\n\s+at /);
    }
    expect(readFileSync(path.join(outside, 'f.txt'), 'utf8')).toBe('precious\n');
    expect(readdirSync(outside)).toEqual(['f.txt']);
  });

  it('outputs - a project reached through a symlink may publish under a symlink that stays inside it', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  s: { run: "echo ok > \${outputs.o}", outputs: { o: alias/f.txt } }
`,
    });
    mkdirSync(project.path('real'));
    symlinkSync('real', project.path('alias'), 'dir');
    const via = path.join(outsideDir(), 'project-link');
    symlinkSync(project.root, via, 'dir');
    const result = await runCli(['-C', via, 'run', 'p', '--json'], { cwd: os.tmpdir() });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(readFileSync(project.path('real/f.txt'), 'utf8')).toBe('ok\n');
  });
});

describe('stages with several outputs', () => {
  it('outputs - when one output cannot be published, none is, and the staged files are kept aside', async () => {
    project = tempProject({
      'out/a.txt': 'old\n',
      'pipelines/p.yaml': `pipeline: p
stages:
  s:
    run: "echo new > \${outputs.a}; echo new > \${outputs.b}; echo new > \${outputs.c}"
    outputs: { a: out/a.txt, b: out/b.txt, c: out/c.txt }
`,
    });
    // out/c.txt is a folder: its rename fails after those of a (replacing a file) and b (a new one).
    mkdirSync(project.path('out/c.txt'));
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code).toBe(1);
    const end = stageEnd(result.stdout, 's');
    expect(end).toMatchObject({ status: 'failed', code: 'publish-failed' });
    expect(end.reason).toContain("output 'c' (out/c.txt)");
    expect(end.reason).toContain('is a folder');
    expect(end.reason).not.toMatch(/\n\s+at /);
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('old\n');
    expect(existsSync(project.path('out/b.txt'))).toBe(false);
    expect(readdirSync(project.path('out/c.txt'))).toEqual([]);
    expect(end.rejectedDir).toBeDefined();
    for (const name of ['a', 'b', 'c']) expect(readFileSync(project.path(`${end.rejectedDir}/${name}/${name}.txt`), 'utf8')).toBe('new\n');
    expect(JSON.parse(readFileSync(project.path(`${end.rejectedDir}/errors.json`), 'utf8'))[0].output).toBe('c');
    const plan = await runCli(['plan', 'p'], { cwd: project.root });
    expect(plan.stdout).toContain('run    s');
  });

  it('outputs - a folder swapped for a symlink out of the project while the stage runs keeps every output unpublished', async () => {
    const outside = outsideDir();
    project = tempProject({
      'out/a.txt': 'old\n',
      'zdir/keep': '',
      'pipelines/p.yaml': `pipeline: p
stages:
  s:
    run: "echo new > \${outputs.a}; echo new > \${outputs.b}; rm -r zdir && ln -s \${params.outside} zdir"
    outputs: { a: out/a.txt, b: zdir/b.txt }
params:
  outside: { type: string }
`,
    });
    const result = await runCli(['run', 'p', '--json', '-p', `outside=${outside}`], { cwd: project.root });
    expect(result.code).toBe(1);
    const end = stageEnd(result.stdout, 's');
    expect(end).toMatchObject({ status: 'failed', code: 'publish-failed' });
    expect(end.reason).toContain("output 'b' (zdir/b.txt)");
    expect(end.reason).toContain('outside the project');
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('old\n');
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe('staging folders of killed runs', () => {
  it('staging - the next run removes the staging folder a killed run left, and keeps one of a live process', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  slow: { run: "echo partial > \${outputs.o}; sleep 30", outputs: { o: out/slow.txt } }
`,
    });
    const child = startCli(['run', 'p', '--json'], { cwd: project.root });
    await new Promise<void>((resolve) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (events(out).some((e) => e.type === 'stage-start')) process.kill(-(child.pid as number), 'SIGKILL');
      });
      child.on('close', () => resolve());
    });
    const staging = project.path('.refinery/staging');
    const left = readdirSync(staging);
    expect(left.length).toBe(1);
    // A run id names its process (base 36 pid): this one is the test's own, alive.
    const live = `20260101T000000000Z-${process.pid.toString(36)}abc`;
    mkdirSync(path.join(staging, live, 'x'), { recursive: true });
    project.write('pipelines/p.yaml', 'pipeline: p\nstages:\n  quick: { run: "echo ok > ${outputs.o}", outputs: { o: out/quick.txt } }\n');
    const rerun = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(readdirSync(staging)).toEqual([live]);
  });
});

describe('staging folder of refinery task', () => {
  it('staging - refinery task removes its own staging folder when it ends', async () => {
    project = demoProject();
    const result = await runCli(['task', 'copy-json', '--param', 'from=src/a.txt', '--output', 'report=out/alone.json'], {
      cwd: project.root,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(readdirSync(project.path('.refinery/staging'))).toEqual([]);
  });
});

describe('input paths', () => {
  it('inputs - an absolute input is read where it is and its content is part of the fingerprint', async () => {
    const outside = outsideDir();
    const file = path.join(outside, 'hosts');
    writeFileSync(file, 'one\n');
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  s: { run: "cat \${inputs} > \${outputs.o}", inputs: ["${file}"], outputs: { o: out/copy.txt } }
`,
    });
    const first = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(readFileSync(project.path('out/copy.txt'), 'utf8')).toBe('one\n');
    const second = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(stageEnds(second.stdout)).toEqual({ s: 'fresh' });
    writeFileSync(file, 'two, longer\n');
    const third = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(stageEnds(third.stdout)).toEqual({ s: 'succeeded' });
    expect(events(third.stdout).find((e) => e.type === 'stage-start')?.reason).toBe(`input ${file} changed`);
    expect(readFileSync(project.path('out/copy.txt'), 'utf8')).toBe('two, longer\n');
    expect(existsSync(project.path(file.slice(1)))).toBe(false);
  });

  it('inputs - a backslash in a file name is kept byte for byte, in inputs and outputs', async () => {
    project = tempProject({
      'src/a\\b.txt': 'backslash\n',
      'src/a/b.txt': 'folder\n',
      'pipelines/p.yaml': `pipeline: p
stages:
  s: { run: "cat \${inputs} > \${outputs.o}", inputs: ['src/a\\b.txt'], outputs: { o: 'out/x\\y.txt' } }
`,
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(readFileSync(project.path('out/x\\y.txt'), 'utf8')).toBe('backslash\n');
    expect(existsSync(project.path('out/x'))).toBe(false);
  });
});
