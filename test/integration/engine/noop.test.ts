import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { demoProject, events, runCli, stageEnds, startCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { mtimeNs, setMtime } from '../../helpers/mtime.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const STAT_ONLY = 'up to date: nothing it read changed since the last run';

async function run(p: TempProject, ...args: string[]) {
  const result = await runCli(['run', 'p', '--json', '--verbose', ...args], { cwd: p.root });
  const ends = events(result.stdout).filter((e) => e.type === 'stage-end');
  return { result, ends: stageEnds(result.stdout), statOnly: ends.length > 0 && ends.every((e) => e.reason === STAT_ONLY) };
}

function project3(): TempProject {
  return tempProject({
    'docs/a.md': 'A',
    'flag.txt': 'on',
    'tasks/upper.ts': `import { readFile, writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'upper', params: z.object({ file: z.string() }), async run(ctx) {
  await writeFile(ctx.outputs.o, (await readFile(ctx.params.file, 'utf8')).toUpperCase());
} });
`,
    'pipelines/p.yaml': `pipeline: p
params:
  suffix: { type: string, default: "!" }
stages:
  each:
    foreach: { glob: "docs/*.md" }
    when: "exists('flag.txt')"
    task: upper
    with: { file: "\${item.path}" }
    inputs: ["\${item.path}"]
    outputs: { o: "out/\${item.stem}.txt" }
  tail:
    run: "cat out/*.txt > \${outputs.o}; echo \${params.suffix} >> \${outputs.o}"
    inputs: ["out/*.txt"]
    outputs: { o: out/all.log }
`,
  });
}

describe('no-op by stats', () => {
  it('noop - an unchanged project is reported up to date from stats alone', async () => {
    project = demoProject();
    const first = await runCli(['run', 'demo', '--json'], { cwd: project.root });
    expect(first.code).toBe(0);
    const second = await runCli(['run', 'demo', '--json'], { cwd: project.root });
    expect(stageEnds(second.stdout)).toEqual({ a: 'fresh', b: 'fresh' });
    expect(
      events(second.stdout)
        .filter((e) => e.type === 'stage-end')
        .every((e) => e.reason === STAT_ONLY),
    ).toBe(true);
  });

  it('noop - every kind of change falls back to the full check', async () => {
    project = project3();
    expect((await run(project)).result.code).toBe(0);
    expect((await run(project)).statOnly).toBe(true);

    project.write('docs/a.md', 'changed');
    let r = await run(project);
    expect(r.statOnly).toBe(false);
    expect(r.ends).toMatchObject({ 'each[a.md]': 'succeeded', tail: 'succeeded' });

    project.write('docs/b.md', 'new');
    r = await run(project);
    expect(r.ends['each[b.md]']).toBe('succeeded');

    rmSync(project.path('out/all.log'));
    r = await run(project);
    expect(r.ends.tail).toBe('succeeded');

    r = await run(project, '--param', 'suffix=?');
    expect(r.ends.tail).toBe('succeeded');
    expect((await run(project, '--param', 'suffix=?')).statOnly).toBe(true);
    expect((await run(project)).ends.tail).toBe('succeeded');

    project.write('tasks/upper.ts', `${(await import('node:fs')).readFileSync(project.path('tasks/upper.ts'), 'utf8')}\n// edited\n`);
    r = await run(project);
    expect(r.ends['each[a.md]']).toBe('succeeded');

    rmSync(project.path('flag.txt'));
    r = await run(project);
    expect(r.statOnly).toBe(false);
    expect(Object.keys(r.ends).filter((k) => k.startsWith('each['))).toEqual([]);
  });

  it('noop - when only some inputs changed, only the stages they reach are checked and run', async () => {
    project = tempProject({
      'src/x.txt': 'x',
      'src/y.txt': 'y',
      'pipelines/p.yaml': `pipeline: p
stages:
  x1: { run: "cat src/x.txt > \${outputs.o}", inputs: [src/x.txt], outputs: { o: out/x1 } }
  y1: { run: "cat src/y.txt > \${outputs.o}", inputs: [src/y.txt], outputs: { o: out/y1 } }
  both: { run: "cat out/x1 out/y1 > \${outputs.o}", inputs: [out/x1, out/y1], outputs: { o: out/both } }
`,
    });
    await run(project);
    project.write('src/y.txt', 'y2');
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(stageEnds(result.stdout)).toEqual({ x1: 'fresh', y1: 'succeeded', both: 'succeeded' });
    expect(events(result.stdout).find((e) => e.type === 'stage-end' && e.stage === 'x1')?.reason).toBe(STAT_ONLY);
    const after = await run(project);
    expect(after.statOnly).toBe(true);
    project.write('src/x.txt', 'x2');
    expect((await run(project)).ends).toEqual({ x1: 'succeeded', y1: 'fresh', both: 'succeeded' });
  });

  function fourWays(): TempProject {
    return tempProject({
      'src/x.txt': 'x',
      'src/y.txt': 'y',
      'docs/d.md': 'd',
      'notes/n.txt': 'n',
      'pipelines/p.yaml': `pipeline: p
stages:
  x1: { run: "cat src/x.txt > \${outputs.o}", inputs: [src/x.txt], outputs: { o: out/x1 } }
  y1: { run: "cat src/y.txt > \${outputs.o}", inputs: [src/y.txt], outputs: { o: out/y1 } }
  both: { run: "cat out/x1 out/y1 > \${outputs.o}", inputs: [out/x1, out/y1], outputs: { o: out/both } }
  folder: { run: "cat docs/*.md > \${outputs.o}", inputs: [docs], outputs: { o: out/folder } }
  globbed: { run: "cat notes/*.txt > \${outputs.o}", inputs: ["notes/*.txt"], outputs: { o: out/globbed } }
`,
    });
  }

  it('noop - a touch reads back only the part of the last plan it reaches, without loading the pipeline', async () => {
    project = fourWays();
    expect((await run(project)).result.code).toBe(0);
    const planRecords = () => readdirSync(project?.path('.refinery/state') ?? '').filter((f) => f.startsWith('plan-'));
    expect(planRecords()).toHaveLength(1);
    // The parse cache is what a full check reads the pipeline from: the touch must not need it.
    rmSync(project.path('.refinery/cache/pipelines'), { recursive: true, force: true });
    project.write('src/y.txt', 'y2');
    const touched = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(touched.code).toBe(0);
    expect(stageEnds(touched.stdout)).toEqual({ x1: 'fresh', y1: 'succeeded', both: 'succeeded', folder: 'fresh', globbed: 'fresh' });
    expect(events(touched.stdout).find((e) => e.type === 'run-start')?.stages).toBe(5);
    expect(events(touched.stdout).find((e) => e.type === 'run-end')?.counts).toMatchObject({ succeeded: 2, fresh: 3 });
    expect(existsSync(project.path('.refinery/cache/pipelines'))).toBe(false);
    expect(readFileSync(project.path('out/both'), 'utf8')).toBe('xy2');
    // A file under a folder input, and one a glob input matches.
    project.write('docs/d.md', 'd2');
    expect((await run(project)).ends).toEqual({ x1: 'fresh', y1: 'fresh', both: 'fresh', folder: 'succeeded', globbed: 'fresh' });
    project.write('notes/n.txt', 'n2');
    expect((await run(project)).ends).toEqual({ x1: 'fresh', y1: 'fresh', both: 'fresh', folder: 'fresh', globbed: 'succeeded' });
    expect(readFileSync(project.path('out/globbed'), 'utf8')).toBe('n2');
    expect((await run(project)).statOnly).toBe(true);
  });

  /** Each stage's end and whether it was found up to date from stats alone. */
  async function reasons(p: TempProject): Promise<Record<string, string>> {
    const result = await runCli(['run', 'p', '--json', '--verbose'], { cwd: p.root });
    expect(result.code).toBe(0);
    const out: Record<string, string> = {};
    for (const e of events(result.stdout))
      if (e.type === 'stage-end') out[e.stage as string] = e.reason === STAT_ONLY ? 'by stat' : (e.status as string);
    return out;
  }

  it('noop - a new foreach item: it and what follows it run, the other items are up to date by their stats', async () => {
    project = project3();
    project.write('docs/c.md', 'C');
    expect((await run(project)).result.code).toBe(0);
    project.write('docs/b.md', 'B');
    expect(await reasons(project)).toEqual({
      'each[a.md]': 'by stat',
      'each[c.md]': 'by stat',
      'each[b.md]': 'succeeded',
      tail: 'succeeded',
    });
    expect(readFileSync(project.path('out/all.log'), 'utf8')).toBe('ABC!\n');
    expect((await run(project)).statOnly).toBe(true);
    // A removed item: the stage reading the folder it left runs again.
    rmSync(project.path('docs/c.md'));
    rmSync(project.path('out/c.txt'));
    const removed = await reasons(project);
    expect(removed.tail).toBe('succeeded');
    expect(Object.keys(removed).sort()).toEqual(['each[a.md]', 'each[b.md]', 'tail']);
    expect(readFileSync(project.path('out/all.log'), 'utf8')).toBe('AB!\n');
  });

  it('noop - a new file in a folder a glob or folder input walks: only that stage is checked, the rest by their stats', async () => {
    project = fourWays();
    expect((await run(project)).result.code).toBe(0);
    project.write('notes/m.txt', 'm');
    expect(await reasons(project)).toEqual({ x1: 'by stat', y1: 'by stat', both: 'by stat', folder: 'by stat', globbed: 'succeeded' });
    expect(readFileSync(project.path('out/globbed'), 'utf8')).toBe('mn');
    project.write('docs/sub/e.md', 'e');
    expect(await reasons(project)).toEqual({ x1: 'by stat', y1: 'by stat', both: 'by stat', folder: 'succeeded', globbed: 'by stat' });
    // A folder no stage and no foreach lists: nothing it holds is read, and nothing runs.
    project.write('src/z.txt', 'z');
    expect((await run(project)).statOnly).toBe(true);
  });

  it('noop - a damaged plan record: the touch falls back to the full check', async () => {
    project = fourWays();
    expect((await run(project)).result.code).toBe(0);
    const [record] = readdirSync(project.path('.refinery/state')).filter((f) => f.startsWith('plan-'));
    writeFileSync(project.path(`.refinery/state/${record}`), '{"key":');
    project.write('src/x.txt', 'x2');
    const touched = await run(project);
    expect(touched.result.code).toBe(0);
    expect(touched.ends).toEqual({ x1: 'succeeded', y1: 'fresh', both: 'succeeded', folder: 'fresh', globbed: 'fresh' });
    expect(readFileSync(project.path('out/both'), 'utf8')).toBe('x2y');
    expect((await run(project)).statOnly).toBe(true);
  });

  it('noop - a plan record whose index is damaged: the touch falls back to the full check', async () => {
    project = fourWays();
    expect((await run(project)).result.code).toBe(0);
    const [record] = readdirSync(project.path('.refinery/state')).filter((f) => f.startsWith('plan-'));
    const file = project.path(`.refinery/state/${record}`);
    // Byte for byte (its index table is binary), and the same length, so every offset still points where it did.
    const text = readFileSync(file, 'latin1');
    expect(text).toMatch(/\n,"n:x1":\[/);
    writeFileSync(file, text.replace(/\n,"n:x1":\[(\d)/, '\n,"n:x1":["'), 'latin1');
    rmSync(project.path('.refinery/cache/pipelines'), { recursive: true, force: true });
    project.write('src/x.txt', 'x2');
    const touched = await run(project);
    expect(touched.result.code).toBe(0);
    expect(touched.statOnly).toBe(false);
    expect(touched.ends).toEqual({ x1: 'succeeded', y1: 'fresh', both: 'succeeded', folder: 'fresh', globbed: 'fresh' });
    // The pipeline was loaded (and its parse cache written) rather than the plan read back.
    expect(existsSync(project.path('.refinery/cache/pipelines'))).toBe(true);
    expect(readFileSync(project.path('out/both'), 'utf8')).toBe('x2y');
  });

  it('noop - a plan record cut short, or with bytes after its last line: the touch falls back to the full check', async () => {
    project = fourWays();
    expect((await run(project)).result.code).toBe(0);
    const [record] = readdirSync(project.path('.refinery/state')).filter((f) => f.startsWith('plan-'));
    const file = project.path(`.refinery/state/${record}`);
    const whole = readFileSync(file);
    // Cut in the last instance's line (globbed), which this touch would not even read.
    for (const [damaged, x] of [
      [whole.subarray(0, whole.length - 20), 'x2'],
      [Buffer.concat([whole, Buffer.from('{}\n')]), 'x3'],
    ] as const) {
      writeFileSync(file, damaged);
      rmSync(project.path('.refinery/cache/pipelines'), { recursive: true, force: true });
      project.write('src/x.txt', x);
      const touched = await run(project);
      expect(touched.ends).toEqual({ x1: 'succeeded', y1: 'fresh', both: 'succeeded', folder: 'fresh', globbed: 'fresh' });
      expect(existsSync(project.path('.refinery/cache/pipelines'))).toBe(true);
      expect(readFileSync(project.path('out/both'), 'utf8')).toBe(`${x}y`);
    }
  });

  it('noop - a plan record in the earlier form (a searched index): the touch falls back to the full check and rewrites it', async () => {
    project = fourWays();
    expect((await run(project)).result.code).toBe(0);
    const [record] = readdirSync(project.path('.refinery/state')).filter((f) => f.startsWith('plan-'));
    const file = project.path(`.refinery/state/${record}`);
    // The same plan in the form an earlier refinery wrote: no form field, the index lines right
    // after the header (found by searching them), then the instance lines.
    const bytes = readFileSync(file);
    const newline = bytes.indexOf(0x0a);
    const { form, buckets, entryBytes, instanceBytes, ...rest } = JSON.parse(bytes.subarray(0, newline).toString('utf8'));
    expect(form).toEqual(expect.any(String));
    const lines = bytes.subarray(newline + 1 + 4 * buckets + 1);
    const index = lines.subarray(0, entryBytes - 1);
    expect(lines.length).toBe(entryBytes - 1 + instanceBytes);
    writeFileSync(file, Buffer.concat([Buffer.from(`${JSON.stringify({ ...rest, indexBytes: index.length })}\n`), lines]));
    rmSync(project.path('.refinery/cache/pipelines'), { recursive: true, force: true });
    project.write('src/x.txt', 'x2');
    const touched = await run(project);
    expect(touched.ends).toEqual({ x1: 'succeeded', y1: 'fresh', both: 'succeeded', folder: 'fresh', globbed: 'fresh' });
    // The pipeline was loaded (and its parse cache written) rather than the old record read.
    expect(existsSync(project.path('.refinery/cache/pipelines'))).toBe(true);
    expect(readFileSync(file, 'latin1').split('\n')[0]).toContain(`"form":${JSON.stringify(form)}`);
    // The record it wrote is read back by the next touch.
    rmSync(project.path('.refinery/cache/pipelines'), { recursive: true, force: true });
    project.write('src/y.txt', 'y2');
    expect((await run(project)).ends).toEqual({ x1: 'fresh', y1: 'succeeded', both: 'succeeded', folder: 'fresh', globbed: 'fresh' });
    expect(existsSync(project.path('.refinery/cache/pipelines'))).toBe(false);
  });

  it('noop - an edited pipeline file is checked in full, even when a stage reads it', async () => {
    const pipeline = (word: string) => `pipeline: p
stages:
  a: { run: "echo ${word} > \${outputs.o}", outputs: { o: out/a } }
  lint: { run: "wc -c < pipelines/p.yaml > \${outputs.o}", inputs: [pipelines/p.yaml], outputs: { o: out/lint } }
`;
    project = tempProject({ 'pipelines/p.yaml': pipeline('one') });
    expect((await run(project)).ends).toEqual({ a: 'succeeded', lint: 'succeeded' });
    expect((await run(project)).statOnly).toBe(true);
    project.write('pipelines/p.yaml', pipeline('two'));
    const edited = await run(project);
    expect(edited.ends).toEqual({ a: 'succeeded', lint: 'succeeded' });
    expect(readFileSync(project.path('out/a'), 'utf8')).toBe('two\n');
    expect((await run(project)).statOnly).toBe(true);
  });

  it('noop - an input edited while the run is going is not mistaken for an unchanged one', async () => {
    project = tempProject({
      'src/x.txt': 'one',
      'pipelines/p.yaml':
        'pipeline: p\nstages:\n  a: { run: "cat src/x.txt > ${outputs.o}; sleep 1", inputs: [src/x.txt], outputs: { o: out/a } }\n',
    });
    const child = startCli(['run', 'p', '--json'], { cwd: project.root });
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"type":"stage-start"') && !out.includes('edited')) {
          out += 'edited';
          project!.write('src/x.txt', 'two');
        }
      });
      child.on('close', () => resolve());
    });
    const next = await run(project);
    expect(next.statOnly).toBe(false);
    expect(next.ends).toEqual({ a: 'succeeded' });
  });

  it('noop - --force and --only never take the shortcut', async () => {
    project = demoProject();
    await runCli(['run', 'demo'], { cwd: project.root });
    const forced = await runCli(['run', 'demo', '--json', '--force'], { cwd: project.root });
    expect(stageEnds(forced.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
  });
});

describe('no-op record - racy timestamps', () => {
  /** New content of the same size in place (same inode), with the mtime put back: only the content tells. */
  function rewriteUnseen(p: TempProject, rel: string, content: string): void {
    const before = statSync(p.path(rel), { bigint: true });
    expect(Buffer.byteLength(content)).toBe(Number(before.size));
    const mtime = mtimeNs(p.path(rel));
    p.write(rel, content);
    setMtime(p.path(rel), mtime);
    expect(statSync(p.path(rel), { bigint: true }).ino).toBe(before.ino);
  }

  const ONE_STAGE = 'pipeline: p\nstages:\n  a: { run: "cat src/x.txt > ${outputs.o}", inputs: [src/x.txt], outputs: { o: out/a } }\n';

  /** A run during which src/x.txt is written (before stage a reads it, after the run started): its stat is taken within its clock tick's reach. */
  async function runWritingMidway(p: TempProject, content: string): Promise<void> {
    const child = startCli(['run', 'p', '--json'], { cwd: p.root });
    let out = '';
    let written = false;
    const code = await new Promise<number | null>((resolve) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"stage":"slow"') && out.includes('"type":"stage-start"') && !written) {
          written = true;
          p.write('src/x.txt', content);
        }
      });
      child.on('close', resolve);
    });
    expect(code).toBe(0);
    expect(stageEnds(out)).toEqual({ slow: 'succeeded', a: 'succeeded' });
  }

  function midwayProject(): TempProject {
    return tempProject({
      'src/x.txt': 'nil',
      'pipelines/p.yaml': `pipeline: p
stages:
  slow: { run: "sleep 1; echo s > \${outputs.o}", outputs: { o: out/slow } }
  a: { run: "cat src/x.txt > \${outputs.o}", inputs: [src/x.txt, out/slow], outputs: { o: out/a } }
`,
    });
  }

  it('noop - an input written during the run and rewritten unseen (same size, mtime and inode) is checked by content', async () => {
    project = midwayProject();
    await runWritingMidway(project, 'one');
    expect(readFileSync(project.path('out/a'), 'utf8')).toBe('one');
    rewriteUnseen(project, 'src/x.txt', 'two');
    const next = await run(project);
    expect(next.statOnly).toBe(false);
    expect(next.ends).toEqual({ slow: 'fresh', a: 'succeeded' });
    expect(readFileSync(project.path('out/a'), 'utf8')).toBe('two');
    // Read long after its write, the stat is settled now: a pure no-op again.
    expect((await run(project)).statOnly).toBe(true);
  });

  it('noop - an unsettled input whose content did not change reruns nothing, and the record then is settled', async () => {
    project = midwayProject();
    await runWritingMidway(project, 'one');
    const next = await run(project);
    expect(next.statOnly).toBe(false);
    expect(next.ends).toEqual({ slow: 'fresh', a: 'fresh' });
    expect((await run(project)).statOnly).toBe(true);
  });

  it('noop - an input whose mtime is ahead of the clock, rewritten unseen, is checked by content', async () => {
    project = tempProject({ 'src/x.txt': 'one', 'pipelines/p.yaml': ONE_STAGE });
    // A minute ahead (a file server whose clock runs fast): its tick has not passed when the run reads it.
    setMtime(project.path('src/x.txt'), BigInt(Date.now() + 60_000) * 1_000_000n + 123_456n);
    expect((await run(project)).ends).toEqual({ a: 'succeeded' });
    rewriteUnseen(project, 'src/x.txt', 'two');
    const next = await run(project);
    expect(next.ends).toEqual({ a: 'succeeded' });
    expect(readFileSync(project.path('out/a'), 'utf8')).toBe('two');
  });

  it('noop - a settled input rewritten unseen is trusted by its stat, as make trusts it: a pure no-op', async () => {
    project = tempProject({ 'src/x.txt': 'one', 'pipelines/p.yaml': ONE_STAGE });
    setMtime(project.path('src/x.txt'), BigInt(Date.now() - 3_600_000) * 1_000_000n + 987_654_321n);
    expect((await run(project)).ends).toEqual({ a: 'succeeded' });
    rewriteUnseen(project, 'src/x.txt', 'two');
    const next = await run(project);
    expect(next.statOnly).toBe(true);
    expect(next.ends).toEqual({ a: 'fresh' });
    expect(next.result.stdout).not.toContain('"type":"stage-start"');
    expect(readFileSync(project.path('out/a'), 'utf8')).toBe('one');
  });
  it('noop - a pipeline with stale_if is answered from stats when no stale_if holds after the run, and checked in full while one does', async () => {
    project = tempProject({
      'flag.json': '{ "again": false }',
      'pipelines/p.yaml': `pipeline: p
stages:
  a:
    run: "cp flag.json \${outputs.o}"
    inputs: [flag.json]
    outputs: { o: out/a.json }
    stale_if: "self.o.again"
`,
    });
    expect((await run(project)).ends).toEqual({ a: 'succeeded' });
    const unchanged = await run(project);
    expect(unchanged.statOnly).toBe(true);
    expect(unchanged.ends).toEqual({ a: 'fresh' });
    project.write('flag.json', '{ "again": true }');
    expect((await run(project)).ends).toEqual({ a: 'succeeded' });
    // Its result asks to be redone: no record answers for it, and it runs each time.
    const asked = await run(project);
    expect(asked.statOnly).toBe(false);
    expect(asked.ends).toEqual({ a: 'succeeded' });
  });

  it("noop - final_if: a finished stage's files are trusted by their folders' listings (a file added is seen, a rewrite in place is not)", async () => {
    project = tempProject({
      'runs/r1/state.json': '{ "state": "done" }',
      'runs/r1/data/log.txt': 'one',
      'runs/r2/state.json': '{ "state": "running" }',
      'runs/r2/data/log.txt': 'two',
      'pipelines/p.yaml': `pipeline: p
stages:
  turn:
    foreach: { glob: "runs/*", type: dir }
    run: "cp \${item.path}/state.json \${outputs.o} && cat \${item.path}/data/*.txt > \${outputs.log}"
    inputs: ["\${item.path}/**"]
    outputs: { o: "out/\${item.name}.json", log: "out/\${item.name}.txt" }
    final_if: "self.o.state == 'done'"
`,
    });
    const checkedFiles = async (): Promise<number> => {
      const r = await runCli(['run', 'p', '-v'], { cwd: project?.root as string });
      return Number(/up-to-date check: (\d+) files/.exec(r.stderr)?.[1]);
    };
    expect((await run(project)).ends).toEqual({ 'turn[r1]': 'succeeded', 'turn[r2]': 'succeeded' });
    // r1's two inputs are left out of the record; r2's, the outputs and the pipeline file stay.
    expect(await checkedFiles()).toBe(7);
    // A rewrite in place of a finished stage's file is not seen: the trust final_if asks for.
    project.write('runs/r1/data/log.txt', 'one, edited');
    const trusted = await run(project);
    expect(trusted.statOnly).toBe(true);
    expect(readFileSync(project.path('out/r1.txt'), 'utf8')).toBe('one');
    // The same rewrite where final_if does not hold is seen, as any file's.
    project.write('runs/r2/data/log.txt', 'two, edited');
    expect((await run(project)).ends).toEqual({ 'turn[r1]': 'fresh', 'turn[r2]': 'succeeded' });
    // A file added beside a finished stage's files changes its folder's listing: the stage is checked by content.
    project.write('runs/r1/data/more.txt', '+more');
    expect((await run(project)).ends).toEqual({ 'turn[r1]': 'succeeded', 'turn[r2]': 'fresh' });
    expect(readFileSync(project.path('out/r1.txt'), 'utf8')).toBe('one, edited+more');
    // Once it no longer holds (a file added shows the stage, which then finds state.json rewritten), its files are recorded one by one again.
    project.write('runs/r1/state.json', '{ "state": "running" }');
    project.write('runs/r1/data/resume.txt', '+resumed');
    expect((await run(project)).ends).toEqual({ 'turn[r1]': 'succeeded', 'turn[r2]': 'fresh' });
    expect(await checkedFiles()).toBe(11);
  });

  it('noop - right after a run that published into new folders a later glob lists, the rerun is answered from stats', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  cell:
    foreach: [x, y]
    run: "echo \${item} > \${outputs.o}"
    outputs: { o: "out/cells/\${item}/r.txt" }
  sum:
    run: "cat out/cells/*/r.txt > \${outputs.o}"
    inputs: ["out/cells/*/r.txt"]
    outputs: { o: out/sum.txt }
`,
    });
    expect((await run(project)).ends).toEqual({ 'cell[x]': 'succeeded', 'cell[y]': 'succeeded', sum: 'succeeded' });
    const next = await run(project);
    expect(next.statOnly).toBe(true);
    expect(next.ends).toEqual({ 'cell[x]': 'fresh', 'cell[y]': 'fresh', sum: 'fresh' });
    // A folder another hand adds there is still seen.
    project.write('out/cells/z/r.txt', 'z');
    expect((await run(project)).ends).toMatchObject({ sum: 'succeeded' });
  });
});
