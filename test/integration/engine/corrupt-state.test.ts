// Damaged state under .refinery/: every kind is set aside (renamed <name>.corrupt-<time>) with a
// warning, and the run goes on as if it were absent; nothing crashes, nothing is lost.
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { demoProject, events, REPO_ROOT, runCli, stageEnds, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS } from '../../helpers/refine-example.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const STAT_ONLY = 'up to date: nothing it read changed since the last run';

function run(p: TempProject, ...args: string[]): Promise<CliResult> {
  return runCli(['run', 'demo', '--json', ...args], { cwd: p.root });
}

/** The files set aside next to `rel` (same folder, `<name>.corrupt-<time>`). */
function setAside(p: TempProject, rel: string): string[] {
  const dir = p.path(path.dirname(rel));
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.startsWith(`${path.basename(rel)}.corrupt-`))
        .map((f) => path.join(dir, f))
    : [];
}

/** A run that went on: no stack trace, every stage ended well, one warning naming the file. */
function expectWentOn(result: CliResult, rel: string): void {
  expect(result.stderr).not.toMatch(/\n\s+at |TypeError|node:internal/);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toContain(`refinery: warning: ${rel}`);
  expect(result.stderr).toMatch(new RegExp(`set aside as ${rel.replace(/[.]/g, '\\.')}\\.corrupt-\\d{8}T\\d{9}Z`));
  expect(Object.values(stageEnds(result.stdout)).every((s) => s === 'succeeded' || s === 'fresh')).toBe(true);
}

function pipelineCacheFile(p: TempProject): string {
  const dir = p.path('.refinery/cache/pipelines');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  expect(files).toHaveLength(1);
  return `.refinery/cache/pipelines/${files[0]}`;
}

describe('damaged state is set aside', () => {
  it.each([
    ['a null line', 'null\n'],
    ['a line that is JSON but no entry', '{"s":"a","f":"abc","r":{"stage":"a"}}\n'],
    ['an array line', '[1,2]\n'],
  ])('journal - %s: set aside, its stages run again, and status reads it without crashing', async (_name, line) => {
    project = demoProject();
    expect((await run(project)).code).toBe(0);
    const journal = '.refinery/state/demo.jsonl';
    const before = readFileSync(project.path(journal), 'utf8') + line;
    appendFileSync(project.path(journal), line);
    const status = await runCli(['status'], { cwd: project.root });
    expect(status.stderr).not.toMatch(/\n\s+at |TypeError/);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(`refinery: warning: ${journal} line 3 is not a journal entry`);
    appendFileSync(project.path(journal), line);
    project.write('src/a.txt', 'changed\n');
    const second = await run(project);
    expectWentOn(second, journal);
    expect(stageEnds(second.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    const kept = setAside(project, journal);
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.map((f) => readFileSync(f, 'utf8'))).toContain(before);
    const third = await run(project);
    expect(third.stderr).toBe('');
    expect(stageEnds(third.stdout)).toEqual({ a: 'fresh', b: 'fresh' });
  });

  it.each([
    ['null', 'null'],
    ['truncated JSON', '{"key":"'],
    ['a record with no stage list', '{"key":"k","pipeline":"demo","files":{},"dirs":{},"probes":{}}'],
  ])('no-op record - %s: set aside, every stage is checked in full', async (_name, text) => {
    project = demoProject();
    expect((await run(project)).code).toBe(0);
    const records = readdirSync(project.path('.refinery/state')).filter((f) => f.startsWith('noop-'));
    expect(records).toHaveLength(1);
    const rel = `.refinery/state/${records[0]}`;
    writeFileSync(project.path(rel), text);
    const second = await run(project);
    expectWentOn(second, rel);
    expect(stageEnds(second.stdout)).toEqual({ a: 'fresh', b: 'fresh' });
    expect(
      events(second.stdout)
        .filter((e) => e.type === 'stage-end')
        .some((e) => e.reason === STAT_ONLY),
    ).toBe(false);
    expect(setAside(project, rel).map((f) => readFileSync(f, 'utf8'))).toEqual([text]);
    const third = await run(project);
    expect(third.stderr).toBe('');
    expect(
      events(third.stdout)
        .filter((e) => e.type === 'stage-end')
        .every((e) => e.reason === STAT_ONLY),
    ).toBe(true);
  });

  it.each([
    ['null', 'null'],
    ['a null stamp', '{"src/a.txt": null}'],
    ['truncated JSON', '{"src/a.txt": [6, '],
  ])('file hashes - %s: set aside, every file is hashed again', async (_name, text) => {
    project = demoProject();
    expect((await run(project)).code).toBe(0);
    const rel = '.refinery/cache/file-hashes.json';
    writeFileSync(project.path(rel), text);
    project.write('src/a.txt', 'changed\n');
    const second = await run(project);
    expectWentOn(second, rel);
    expect(stageEnds(second.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    expect(setAside(project, rel).map((f) => readFileSync(f, 'utf8'))).toEqual([text]);
    // Written anew (outputs the run made are stamped), and read back without a word.
    expect(readFileSync(project.path(rel), 'utf8')).toMatch(/\n,"out\/b\.json":\[/);
    expect((await run(project, '--force')).stderr).toBe('');
  });

  it.each([
    ['null', 'null'],
    ['a pipeline without stages', '{"name":"demo","file":"x","params":{},"pools":{}}'],
    ['a stage without outputs', '{"name":"demo","file":"x","params":{},"pools":{},"stages":[{"id":"a","kind":"run","inputs":[]}]}'],
    ['truncated JSON', '{"name":"de'],
  ])('parse cache - %s: set aside, the pipeline is parsed again', async (_name, text) => {
    project = demoProject();
    expect((await run(project)).code).toBe(0);
    const rel = pipelineCacheFile(project);
    writeFileSync(project.path(rel), text);
    const second = await run(project, '--force');
    expectWentOn(second, rel);
    expect(stageEnds(second.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    expect(setAside(project, rel).map((f) => readFileSync(f, 'utf8'))).toEqual([text]);
    // The fresh cache written in its place is read back without a word.
    const third = await run(project, '--force');
    expect(third.stderr).toBe('');
  });

  it.each(['runs', 'state', 'cache'])(
    'state folders - .refinery/%s replaced by a file: set aside, a folder takes its place',
    async (folder) => {
      project = demoProject();
      expect((await run(project)).code).toBe(0);
      const rel = `.refinery/${folder}`;
      rmSync(project.path(rel), { recursive: true });
      writeFileSync(project.path(rel), 'not a folder\n');
      project.write('src/a.txt', 'changed\n');
      const second = await run(project);
      expectWentOn(second, rel);
      expect(setAside(project, rel).map((f) => readFileSync(f, 'utf8'))).toEqual(['not a folder\n']);
      expect(readdirSync(project.path('.refinery/runs')).length).toBeGreaterThanOrEqual(1);
      const status = await runCli(['status', '--json'], { cwd: project.root });
      expect(status.code, status.stderr).toBe(0);
      expect((JSON.parse(status.stdout) as { runs: unknown[] }).runs.length).toBeGreaterThanOrEqual(1);
    },
  );

  it('journal - a line torn by a crash or a full disk is skipped quietly, and the next record starts a line of its own', async () => {
    project = demoProject();
    // A run that died while writing its first record: the stages have none, so the next run's first line is a record.
    project.write('.refinery/state/demo.jsonl', '{"s":"a","f":"0123');
    const second = await run(project);
    expect(second.stderr).toBe('');
    expect(stageEnds(second.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
    // What that run recorded is read back: nothing would run now.
    const plan = await runCli(['plan', 'demo', '--json'], { cwd: project.root });
    expect(plan.stderr).toBe('');
    expect((JSON.parse(plan.stdout) as Array<{ id: string; decision: string }>).map((e) => [e.id, e.decision])).toEqual([
      ['a', 'fresh'],
      ['b', 'fresh'],
    ]);
  });

  it('journal - a folder where the journal belongs: set aside, the run goes on', async () => {
    project = demoProject();
    expect((await run(project)).code).toBe(0);
    const rel = '.refinery/state/demo.jsonl';
    rmSync(project.path(rel));
    mkdirSync(project.path(rel));
    project.write('src/a.txt', 'changed\n');
    const second = await run(project);
    expectWentOn(second, rel);
    expect(stageEnds(second.stdout)).toEqual({ a: 'succeeded', b: 'succeeded' });
  });

  it('LLM cache - a damaged response entry is set aside with a warning and the call is made again', async () => {
    project = tempProject();
    for (const rel of ['refinery.config.yaml', 'pipelines/refine.yaml', 'examples/refine'])
      cpSync(path.join(REPO_ROOT, rel), project.path(rel), { recursive: true });
    const refine = (...args: string[]) =>
      runCli(['run', 'refine', ...EXAMPLE_REFINE_PARAMS, '--only', 'criteria', '--json', ...args], { cwd: project!.root });
    const first = await refine();
    expect(first.code, first.stderr).toBe(0);
    const llm = project.path('.refinery/cache/llm');
    const entries = readdirSync(llm, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'));
    expect(entries.length).toBeGreaterThanOrEqual(1);
    const rel = path.join('.refinery/cache/llm', entries[0] as string);
    writeFileSync(project.path(rel), '{"key":');
    const second = await refine('--force');
    expect(second.stderr).not.toMatch(/\n\s+at |TypeError/);
    expect(second.code, second.stderr).toBe(0);
    const warnings = events(second.stdout)
      .filter((e) => e.type === 'stage-report' && (e.report as { kind: string }).kind === 'warning')
      .map((e) => (e.report as { message: string }).message);
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^${rel.replace(/[.]/g, '\\.')} is not a cached model response: set aside as .*\\.corrupt-`)),
    ]);
    expect(setAside(project, rel).map((f) => readFileSync(f, 'utf8'))).toEqual(['{"key":']);
    // Answered again and cached again: the entry is whole once more.
    expect(JSON.parse(readFileSync(project.path(rel), 'utf8'))).toHaveProperty('result');
  });

  function threeStages(): TempProject {
    return tempProject({
      'src/x.txt': 'x',
      'src/y.txt': 'y',
      'src/z.txt': 'z',
      'pipelines/demo.yaml': `pipeline: demo
stages:
  z1: { run: "cat src/z.txt > \${outputs.o}", inputs: [src/z.txt], outputs: { o: out/z1 } }
  x1: { run: "cat src/x.txt > \${outputs.o}", inputs: [src/x.txt], outputs: { o: out/x1 } }
  y1: { run: "cat src/y.txt > \${outputs.o}", inputs: [src/y.txt], outputs: { o: out/y1 } }
  both: { run: "cat out/x1 out/y1 > \${outputs.o}", inputs: [out/x1, out/y1], outputs: { o: out/both } }
`,
    });
  }

  /** Makes a stage's last journal line JSON that is no entry (a record without its fields). */
  function damageRecordOf(p: TempProject, stage: string): string {
    const journal = '.refinery/state/demo.jsonl';
    appendFileSync(p.path(journal), `${JSON.stringify({ s: stage, f: 'abc', r: { stage } })}\n`);
    return journal;
  }

  it('journal - a touch whose stages include one with a damaged record: set aside before any stage is judged, they run again', async () => {
    project = threeStages();
    expect((await run(project)).code).toBe(0);
    const journal = damageRecordOf(project, 'both');
    // Same content, new stat: y1 is up to date by its record, were that record to be trusted.
    project.write('src/y.txt', 'y');
    const touched = await run(project);
    expectWentOn(touched, journal);
    expect(touched.stderr).toContain(`${journal} line 5 is not a journal entry`);
    expect(stageEnds(touched.stdout)).toEqual({ z1: 'fresh', x1: 'fresh', y1: 'succeeded', both: 'succeeded' });
    // The touch checked only what the change reaches: x1 is up to date by its stats.
    expect(events(touched.stdout).find((e) => e.type === 'stage-end' && e.stage === 'x1')?.reason).toBe(STAT_ONLY);
  });

  it('journal - a damaged line of a stage a touch does not reach is found by the next run that reads it', async () => {
    project = threeStages();
    expect((await run(project)).code).toBe(0);
    const journal = damageRecordOf(project, 'z1');
    project.write('src/y.txt', 'y2');
    // z1 is neither reached nor needed by what is: its line is not read.
    const touched = await run(project);
    expect(touched.code, touched.stderr).toBe(0);
    expect(touched.stderr).toBe('');
    expect(stageEnds(touched.stdout)).toEqual({ z1: 'fresh', x1: 'fresh', y1: 'succeeded', both: 'succeeded' });
    const full = await run(project, '--force');
    expectWentOn(full, journal);
    expect(full.stderr).toContain(`${journal} line 5 is not a journal entry`);
    expect(setAside(project, journal)).toHaveLength(1);
  });
});
