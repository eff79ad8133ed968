import { cpSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { REPO_ROOT, events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { FIXTURES } from './fixture-truth.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

function turnDirs(root: string): string[] {
  const logs = path.join(root, '.massgen/massgen_logs');
  return readdirSync(logs)
    .filter((d) => d.startsWith('log_'))
    .flatMap((d) =>
      readdirSync(path.join(logs, d))
        .filter((t) => /^turn_\d+$/.test(t))
        .map((t) => path.join(logs, d, t)),
    )
    .filter((p) => statSync(p).isDirectory())
    .sort();
}

it("analyze pipeline - with no params, a project's .massgen/massgen_logs gets a valid analysis and report for every turn, and a second run does no work", async () => {
  project = tempProject();
  cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), project.path('.massgen/massgen_logs'), { recursive: true, verbatimSymlinks: true });
  cpSync(path.join(REPO_ROOT, 'pipelines/analyze.yaml'), project.path('pipelines/analyze.yaml'));
  const first = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
  expect(first.code, first.stderr).toBe(0);
  const turns = turnDirs(project.root);
  expect(turns.length).toBe(6);
  expect(Object.values(stageEnds(first.stdout))).toEqual(Array(turns.length + 1).fill('succeeded'));
  const registry = new SchemaRegistry(project.root);
  for (const turn of turns) {
    const analysis = JSON.parse(readFileSync(path.join(turn, 'analysis.json'), 'utf8')) as unknown;
    expect(registry.validate('turn-analysis', analysis), turn).toEqual({ ok: true });
    const report = readFileSync(path.join(turn, 'ANALYSIS_REPORT.md'), 'utf8');
    expect(report).toContain('# MassGen Log Analysis Report');
    expect((report.match(/```mermaid/g) ?? []).length).toBeGreaterThanOrEqual(2);
  }
  const second = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
  expect(second.code).toBe(0);
  expect(Object.values(stageEnds(second.stdout))).toEqual(Array(turns.length + 1).fill('fresh'));
  expect(events(second.stdout).filter((e) => e.type === 'stage-start')).toEqual([]);
});

it('analyze pipeline - after a run where every turn is up to date, the next unchanged run is answered from the stats it recorded', async () => {
  project = tempProject();
  cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), project.path('.massgen/massgen_logs'), { recursive: true, verbatimSymlinks: true });
  expect((await runCli(['run', 'analyze'], { cwd: project.root })).code).toBe(0);
  expect((await runCli(['run', 'analyze'], { cwd: project.root })).code).toBe(0);
  // stale_if holds for no turn (none is in progress): the record is kept, and the third run compares stats only.
  const third = await runCli(['run', 'analyze', '-v'], { cwd: project.root });
  expect(third.code, third.stderr).toBe(0);
  expect(third.stderr).toMatch(/up-to-date check: \d+ files the last run read, \d+ looked at here: 0 changed/);
  // One new run: only its turn and the summary are analyzed.
  cpSync(
    path.join(FIXTURES, 'massgen-v0191', 'consensus-3', 'log_20261130_064801_485886'),
    project.path('.massgen/massgen_logs/log_20261130_064801_485886'),
    { recursive: true },
  );
  const added = await runCli(['run', 'analyze', '--json', '--verbose'], { cwd: project.root });
  expect(added.code, added.stderr).toBe(0);
  expect(
    events(added.stdout)
      .filter((e) => e.type === 'stage-start')
      .map((e) => e.stage),
  ).toEqual(['turn[log_20261130_064801_485886/turn_1]', 'summary']);
  // The logs folder's listing changed, no file did: the other turns stand on their stats, unhashed.
  expect(added.stderr).toMatch(/looked at here: 0 changed, 1 folder listing changed/);
  const others = events(added.stdout).filter((e) => e.type === 'stage-end' && e.status === 'fresh');
  expect(others.length).toBe(turnDirs(project.root).length - 1);
  expect(new Set(others.map((e) => e.reason))).toEqual(new Set(['up to date: nothing it read changed since the last run']));
});

it('analyze pipeline - a turn still in progress is analyzed again by every run, though no file changed', async () => {
  project = tempProject();
  cpSync(path.join(FIXTURES, 'massgen-v0191', 'killed'), project.path('.massgen/massgen_logs'), { recursive: true });
  // A heartbeat never too old: the killed run counts as still running.
  const args = ['run', 'analyze', '--json', '--param', 'stale_after_seconds=999999999'];
  for (let i = 0; i < 3; i++) {
    const result = await runCli(args, { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)['turn[log_20261130_064840_961991/turn_1]'], `run ${i + 1}`).toBe('succeeded');
  }
});
