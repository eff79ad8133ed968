import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoProject, events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;

/** True once the process has exited (a zombie awaiting its reaper counts as exited). */
async function processGone(pid: number, deadlineMs = 3000): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    let state = '';
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '';
    } catch {
      return true;
    }
    if (state === 'Z' || state === 'X') return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
afterEach(() => project?.cleanup());

describe('refinery run', () => {
  it('run - the minimal demo pipeline runs, validates and is up to date the second time', async () => {
    project = demoProject();
    const first = await runCli(['run', 'demo', '--json'], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    expect(stageEnds(first.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe('alpha\nhello\n');
    expect(JSON.parse(readFileSync(project.path('out/b.json'), 'utf8'))).toEqual({ lines: ['alpha', 'hello'] });
    const second = await runCli(['run', 'demo', '--json'], { cwd: project.root });
    expect(second.code).toBe(0);
    expect(stageEnds(second.stdout)).toEqual({ a: 'fresh', b: 'fresh' });
  });

  it('run - a param override is shell-quoted and reruns the stage', async () => {
    project = demoProject();
    await runCli(['run', 'demo'], { cwd: project.root });
    const result = await runCli(['run', 'demo', '--json', '--param', "greeting=it's $HOME; rm -rf x"], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    expect(readFileSync(project.path('out/a.txt'), 'utf8')).toBe("alpha\nit's $HOME; rm -rf x\n");
  });

  it('run - changing one input reruns exactly the stages downstream of it', async () => {
    project = tempProject({
      'src/x.txt': 'x',
      'src/y.txt': 'y',
      'pipelines/p.yaml': `pipeline: p
stages:
  x1: { run: "cat src/x.txt > \${outputs.o}", inputs: [src/x.txt], outputs: { o: out/x1 } }
  x2: { run: "cat out/x1 > \${outputs.o}", inputs: [out/x1], outputs: { o: out/x2 } }
  y1: { run: "cat src/y.txt > \${outputs.o}", inputs: [src/y.txt], outputs: { o: out/y1 } }
  both: { run: "cat out/x2 out/y1 > \${outputs.o}", inputs: [out/x2, out/y1], outputs: { o: out/both } }
`,
    });
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    project.write('src/y.txt', 'y changed');
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(stageEnds(result.stdout)).toEqual({ x1: 'fresh', x2: 'fresh', y1: 'succeeded', both: 'succeeded' });
    expect(readFileSync(project.path('out/both'), 'utf8')).toBe('xy changed');
    const start = events(result.stdout).find((e) => e.type === 'stage-start' && e.stage === 'y1');
    expect(start?.reason).toBe('input src/y.txt changed');
  });

  it('run - --force reruns everything and --only runs a stage with what it needs', async () => {
    project = demoProject();
    await runCli(['run', 'demo'], { cwd: project.root });
    const forced = await runCli(['run', 'demo', '--json', '--force'], { cwd: project.root });
    expect(stageEnds(forced.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    project.write('src/a.txt', 'changed\n');
    const only = await runCli(['run', 'demo', '--json', '--only', 'a'], { cwd: project.root });
    expect(stageEnds(only.stdout)).toEqual({ a: 'succeeded' });
  });

  it('run - an invalid artifact is rejected with its errors, nothing downstream runs, exit 1', async () => {
    project = tempProject({
      'schemas/count.schema.json': JSON.stringify({ type: 'object', required: ['count'], properties: { count: { type: 'integer' } } }),
      'pipelines/p.yaml': `pipeline: p
stages:
  make:
    run: "echo '{\\"count\\": \\"three\\"}' > \${outputs.data}"
    outputs: { data: { path: out/data.json, schema: count } }
  use:
    run: "cat out/data.json > \${outputs.copy}"
    inputs: [out/data.json]
    outputs: { copy: out/copy.json }
`,
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code).toBe(1);
    expect(stageEnds(result.stdout)).toEqual({ make: 'failed', use: 'blocked' });
    expect(existsSync(project.path('out/data.json'))).toBe(false);
    const end = events(result.stdout).find((e) => e.type === 'stage-end' && e.stage === 'make') as {
      rejectedDir: string;
      issues: Array<{ pointer: string; message: string }>;
    };
    expect(end.issues[0]?.pointer).toBe('/count');
    const rejected = project.path(end.rejectedDir);
    expect(rejected).toContain(path.join('.refinery', 'rejected'));
    const errors = JSON.parse(readFileSync(path.join(rejected, 'errors.json'), 'utf8')) as Array<{ pointer: string; message: string }>;
    expect(errors[0]).toMatchObject({ pointer: '/count', message: expect.stringContaining('must be integer') });
    expect(readFileSync(path.join(rejected, 'data', 'data.json'), 'utf8')).toContain('three');
  });

  it('run - --keep-going runs independent stages after a failure; without it they are not started', async () => {
    const files = {
      'pipelines/p.yaml': `pipeline: p
stages:
  bad: { run: "exit 3", outputs: { o: out/bad } }
  after: { run: "cp out/bad \${outputs.o}", inputs: [out/bad], outputs: { o: out/after } }
  other: { run: "echo ok > \${outputs.o}", needs: [slow], outputs: { o: out/other } }
  slow: { run: "sleep 0.3; echo ok > \${outputs.o}", outputs: { o: out/slow } }
`,
    };
    project = tempProject(files);
    const kept = await runCli(['run', 'p', '--json', '-k', '-j', '1'], { cwd: project.root });
    expect(kept.code).toBe(1);
    expect(stageEnds(kept.stdout)).toEqual({ bad: 'failed', after: 'blocked', slow: 'succeeded', other: 'succeeded' });
    const end = events(kept.stdout).find((e) => e.type === 'stage-end' && e.stage === 'bad');
    expect(end).toMatchObject({ code: 'command-failed', reason: expect.stringContaining('exit code 3') });
  });

  it('run - a stage is retried with backoff until it succeeds', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  flaky:
    run: "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; [ $n -ge 3 ] && echo done > \${outputs.o}"
    outputs: { o: out/flaky }
    retries: 3
    retry_backoff: 10ms
`,
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    const end = events(result.stdout).find((e) => e.type === 'stage-end') as { status: string; attempts: number };
    expect(end).toMatchObject({ status: 'succeeded', attempts: 3 });
  });

  it('run - a timeout kills the whole process group of the stage', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  hang:
    run: "sleep 30 & echo $! > child.pid; wait"
    outputs: { o: out/never }
    timeout: 500ms
`,
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code).toBe(1);
    const end = events(result.stdout).find((e) => e.type === 'stage-end') as { status: string; code: string; reason: string };
    expect(end).toMatchObject({ status: 'failed', code: 'timed-out' });
    expect(end.reason).toContain('timed out after 500 ms');
    const pid = Number(readFileSync(project.path('child.pid'), 'utf8'));
    expect(await processGone(pid)).toBe(true);
  });

  it('run - foreach over a glob and a list; a when over the item drops items while expanding', async () => {
    project = tempProject({
      'docs/a.md': 'A',
      'docs/b.md': 'B',
      'docs/skip.txt': 'no',
      'pipelines/p.yaml': `pipeline: p
params:
  names: { type: list, default: [one, two, three] }
stages:
  upper:
    foreach: { glob: "docs/*.md" }
    run: "tr a-z A-Z < \${item.path} > \${outputs.o}"
    inputs: ["\${item.path}"]
    outputs: { o: "out/\${item.stem}.txt" }
  greet:
    foreach: "\${params.names}"
    as: name
    when: "name != 'two'"
    run: "echo hi \${name} > \${outputs.o}"
    outputs: { o: "out/greet-\${name}.txt" }
`,
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({
      'upper[a.md]': 'succeeded',
      'upper[b.md]': 'succeeded',
      'greet[one]': 'succeeded',
      'greet[three]': 'succeeded',
    });
    expect(readdirSync(project.path('out')).sort()).toEqual(['a.txt', 'b.txt', 'greet-one.txt', 'greet-three.txt']);
    project.write('docs/c.md', 'C');
    const again = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(
      Object.entries(stageEnds(again.stdout))
        .filter(([, s]) => s === 'succeeded')
        .map(([id]) => id),
    ).toEqual(['upper[c.md]']);
  });

  it('run - a bounded loop repeats its stages until the condition holds', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
params:
  target: { type: integer, default: 3 }
stages:
  seed: { run: "echo 0 > \${outputs.o}", outputs: { o: out/seed.txt } }
  rounds:
    needs: [seed]
    loop:
      max: 5
      until: "artifacts.step.state.value >= params.target"
      stages:
        step:
          run: "echo '{\\"value\\": \${loop.iteration}}' > \${outputs.state}"
          outputs: { state: "out/round_\${loop.round}/state.json" }
  report:
    needs: [rounds]
    run: "ls out > \${outputs.o}"
    outputs: { o: out/report.txt }
`,
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    const loops = events(result.stdout)
      .filter((e) => e.type === 'loop-iteration')
      .map((e) => `${e.iteration}:${e.decision}`);
    expect(loops).toEqual(['1:continue', '2:continue', '3:done']);
    expect(readFileSync(project.path('out/report.txt'), 'utf8').split('\n').filter(Boolean)).toEqual([
      'round_001',
      'round_002',
      'round_003',
      'seed.txt',
    ]);
    const again = await runCli(['run', 'p', '--json', '--param', 'target=4'], { cwd: project.root });
    const ends = stageEnds(again.stdout);
    expect(ends['rounds#1.step']).toBe('fresh');
    expect(ends['rounds#4.step']).toBe('succeeded');
    expect(ends['rounds#5.step']).toBeUndefined();
  });

  it('run - inside a loop, a stage waits for every foreach instance it needs, in every iteration', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
params:
  judges: { type: list, default: [a, b, c] }
stages:
  rounds:
    loop:
      max: 3
      stages:
        evaluate:
          foreach: "\${params.judges}"
          as: judge
          run: "sleep 0.\${judge == 'c' ? 3 : 0}; echo \${judge} > \${outputs.v}"
          outputs: { v: "out/\${loop.round}/\${judge}.txt" }
        consensus:
          needs: [evaluate]
          run: "cat out/\${loop.round}/a.txt out/\${loop.round}/b.txt out/\${loop.round}/c.txt > \${outputs.c}"
          outputs: { c: "out/\${loop.round}/consensus.txt" }
`,
    });
    const result = await runCli(['run', 'p', '--json', '-j', '2'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    const order = events(result.stdout)
      .filter((e) => e.type === 'stage-start' || e.type === 'stage-end')
      .map((e) => `${e.type}:${e.stage}`);
    for (const round of [1, 2, 3]) {
      const consensusStart = order.indexOf(`stage-start:rounds#${round}.consensus`);
      for (const judge of ['a', 'b', 'c'])
        expect(order.indexOf(`stage-end:rounds#${round}.evaluate[${judge}]`)).toBeLessThan(consensusStart);
      expect(readFileSync(project.path(`out/00${round}/consensus.txt`), 'utf8')).toBe('a\nb\nc\n');
    }
  });

  it('run - a named pool bounds its stages while others use the free slots', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
pools: { llm: 1 }
stages:
  l1: { run: "sleep 0.2; echo 1 > \${outputs.o}", pool: llm, outputs: { o: out/l1 } }
  l2: { run: "sleep 0.2; echo 2 > \${outputs.o}", pool: llm, outputs: { o: out/l2 } }
  l3: { run: "sleep 0.2; echo 3 > \${outputs.o}", pool: llm, outputs: { o: out/l3 } }
  free: { run: "sleep 0.2; echo f > \${outputs.o}", outputs: { o: out/free } }
`,
    });
    const result = await runCli(['run', 'p', '--json', '-j', '4'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    let inPool = 0;
    let maxInPool = 0;
    let freeOverlapsPool = false;
    for (const e of events(result.stdout)) {
      const pooled = typeof e.stage === 'string' && e.stage.startsWith('l');
      if (e.type === 'stage-start' && pooled) maxInPool = Math.max(maxInPool, ++inPool);
      if (e.type === 'stage-end' && pooled) inPool -= 1;
      if (e.type === 'stage-start' && e.stage === 'free' && inPool > 0) freeOverlapsPool = true;
    }
    expect(maxInPool).toBe(1);
    expect(freeOverlapsPool).toBe(true);
  });

  it('run - a missing input that no stage writes fails the stage with its path', async () => {
    project = tempProject({
      'pipelines/p.yaml': 'pipeline: p\nstages:\n  a: { run: "cat src/nope > ${outputs.o}", inputs: [src/nope], outputs: { o: out/a } }\n',
    });
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code).toBe(1);
    expect(events(result.stdout).find((e) => e.type === 'stage-end')).toMatchObject({
      code: 'missing-input',
      reason: 'input src/nope does not exist, and no stage writes it',
    });
  });

  it('run - a modified or deleted output makes its stage run again', async () => {
    project = demoProject();
    await runCli(['run', 'demo'], { cwd: project.root });
    project.write('out/b.json', '{"lines": ["tampered"]}');
    const result = await runCli(['run', 'demo', '--json'], { cwd: project.root });
    expect(stageEnds(result.stdout)).toEqual({ a: 'fresh', b: 'succeeded' });
    expect(events(result.stdout).find((e) => e.type === 'stage-start')?.reason).toBe('output out/b.json was modified');
  });
});
