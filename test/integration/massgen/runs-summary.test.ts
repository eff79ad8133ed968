// `refinery logs summary` and the analyze pipeline's summary stage, through the real CLI: the
// summary of the bundled examples and of 100 generated runs on 3 models, checked against the
// turns' analysis.json files; incremental reading; --since and --group-by.
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { FLEET_MODELS, fleetScripts } from '../../../dev/massgen-gen/fleet.ts';
import type { RunsSummary } from '../../../src/workflows/massgen/runs-summary-model.ts';
import { REPO_ROOT, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { analysesUnder, dayOf, expectPartsAddUp, expectReportLinks, expectTotalsOf } from './summary-checks.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const LOGS = '.massgen/massgen_logs';
const registry = new SchemaRegistry(REPO_ROOT);

/** `refinery logs summary` writes logs-summary.json; the analyze pipeline's summary stage runs-summary.json. */
function readSummary(p: TempProject, file: 'logs-summary.json' | 'runs-summary.json' = 'logs-summary.json', dir = LOGS): RunsSummary {
  const summary = JSON.parse(readFileSync(p.path(path.join(dir, file)), 'utf8')) as RunsSummary;
  expect(registry.validate('runs-summary', summary)).toEqual({ ok: true });
  return summary;
}

describe('refinery logs summary', () => {
  it('logs summary - the bundled examples: totals equal the turn analyses, every total the sum of its parts, every run linked to its report', async () => {
    project = tempProject();
    cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), project.path(LOGS), { recursive: true, verbatimSymlinks: true });
    const result = await runCli(['logs', 'summary', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('analyzed 6 turn(s), 0 up to date');
    const printed = JSON.parse(result.stdout) as RunsSummary;
    const summary = readSummary(project);
    expect(printed.totals).toEqual(summary.totals);
    const analyses = analysesUnder(project.path(LOGS));
    expect(analyses).toHaveLength(6);
    expectTotalsOf(summary, analyses);
    expectPartsAddUp(summary);
    expectReportLinks(summary, project.path(LOGS));
    // The examples' features, as the generator's manifest describes them.
    expect(summary.totals.orchestrationRestarts).toBe(1);
    expect(summary.states).toEqual([
      { state: 'completed', turns: 5 },
      { state: 'incomplete', turns: 1 },
    ]);
    expect(summary.enforcement.byReason.map((r) => r.reason).sort()).toEqual([
      'api_error',
      'invalid_vote_id',
      'no_tool_calls',
      'no_workflow_tool',
      'vote_and_answer',
      'vote_no_answers',
    ]);
    const markdown = readFileSync(project.path(path.join(LOGS, 'LOGS_SUMMARY.md')), 'utf8');
    expect(markdown).toContain('```mermaid\nxychart-beta');
    expect(markdown).toContain('```mermaid\npie title Enforcement retries by reason');
    expect(markdown).toContain('(log_20251201_093050_370528/turn_2/ANALYSIS_REPORT.md)');
  });

  it('logs summary - 100 generated runs on 3 models: totals, parts, models, --group-by and --since', async () => {
    project = tempProject();
    generateLogs({ outDir: project.path(LOGS), seed: 5, scripts: fleetScripts(100) });
    const result = await runCli(['logs', 'summary'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`wrote ${LOGS}/LOGS_SUMMARY.md`);
    const summary = readSummary(project);
    const analyses = analysesUnder(project.path(LOGS));
    expect(summary.totals.sessions).toBe(100);
    expect(analyses).toHaveLength(120); // the multi-turn scenario has two turns
    expectTotalsOf(summary, analyses);
    expectPartsAddUp(summary);
    expect(summary.groups.rows.map((r) => r.key).sort()).toEqual([...FLEET_MODELS].sort());
    expect(summary.winners.byModel.map((w) => w.model).sort()).toEqual([...FLEET_MODELS].sort());
    // Each model's enforcement retries are those of the runs on it.
    for (const model of FLEET_MODELS) {
      const mine = analyses.filter((a) => a.agents.some((g) => g.model === model));
      expect(summary.enforcement.byModel.filter((r) => r.model === model).reduce((s, r) => s + r.retries, 0)).toBe(
        mine.reduce((s, a) => s + a.errors.enforcement.length, 0),
      );
    }
    for (const by of ['agent', 'config'] as const) {
      const grouped = await runCli(['logs', 'summary', '--group-by', by, '--json'], { cwd: project.root });
      expect(grouped.code, grouped.stderr).toBe(0);
      expect(grouped.stderr).toContain('analyzed 0 turn(s), 120 up to date');
      const s = JSON.parse(grouped.stdout) as RunsSummary;
      expect(s.groups.by).toBe(by);
      expectPartsAddUp(s);
    }
    const days = [...new Set(analyses.map(dayOf))].sort();
    expect(days.length).toBeGreaterThan(0);
    const since = days[Math.floor(days.length / 2)] as string;
    const recent = await runCli(['logs', 'summary', '--since', since, '--json'], { cwd: project.root });
    const s = JSON.parse(recent.stdout) as RunsSummary;
    expect(s.filter.since).toBe(since);
    expectTotalsOf(
      s,
      analyses.filter((a) => dayOf(a) >= since),
    );
    expectPartsAddUp(s);
  }, 180_000);

  it('logs summary - incremental: after one new run only its turn is analyzed and read; the others are known by stat', async () => {
    project = tempProject();
    generateLogs({ outDir: project.path(LOGS), seed: 9, scripts: fleetScripts(12) });
    const first = await runCli(['logs', 'summary'], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/analyzed 14 turn\(s\), 0 up to date; analysis files: 14 read/);
    generateLogs({ outDir: project.path(LOGS), seed: 9, scripts: fleetScripts(1, undefined, 12), firstIndex: 12 });
    const second = await runCli(['logs', 'summary'], { cwd: project.root });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /analyzed 1 turn\(s\), 14 up to date; analysis files: 1 read, \d+ unchanged by content, \d+ unchanged by stat/,
    );
    const summary = readSummary(project);
    expect(summary.totals.sessions).toBe(13);
    expectTotalsOf(summary, analysesUnder(project.path(LOGS)));
  }, 120_000);

  it('logs summary - a bad --since, --group-by or logs folder is exit 2 with the fix', async () => {
    project = tempProject();
    cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), project.path(LOGS), { recursive: true });
    expect(await runCli(['logs', 'summary', '--since', 'yesterday'], { cwd: project.root })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--since must be a date YYYY-MM-DD'),
    });
    expect(await runCli(['logs', 'summary', '--group-by', 'color'], { cwd: project.root })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--group-by must be one of model, agent, config'),
    });
    const missing = await runCli(['logs', 'summary', '--logs-dir', 'nowhere'], { cwd: project.root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`MassGen logs folder nowhere (${project.path('nowhere')}) does not exist`);
  });
});

describe('analyze pipeline summary stage', () => {
  it('summary stage - fans in every turn, is up to date when nothing changed, and reruns (reading one analysis) when a turn is added', async () => {
    project = tempProject();
    cpSync(path.join(REPO_ROOT, 'pipelines/analyze.yaml'), project.path('pipelines/analyze.yaml'));
    generateLogs({ outDir: project.path(LOGS), seed: 3, scripts: fleetScripts(5) });
    const first = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    expect(stageEnds(first.stdout).summary).toBe('succeeded');
    const summary = readSummary(project, 'runs-summary.json');
    const analyses = analysesUnder(project.path(LOGS));
    expectTotalsOf(summary, analyses);
    expectPartsAddUp(summary);
    expectReportLinks(summary, project.path(LOGS));
    const again = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
    expect(stageEnds(again.stdout).summary).toBe('fresh');
    generateLogs({ outDir: project.path(LOGS), seed: 3, scripts: fleetScripts(1, undefined, 5), firstIndex: 5 });
    const third = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
    const ends = stageEnds(third.stdout);
    expect(
      Object.entries(ends)
        .filter(([, s]) => s === 'succeeded')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['summary', expect.stringMatching(/^turn\[log_\d+_\d+_\d+\/turn_1\]$/)]);
    const summaryEnd = third.stdout.split('\n').filter((l) => l.includes('"stage":"summary"') && l.includes('"stage-end"'))[0] ?? '';
    expect(summaryEnd).toContain('1 analyses read, 6 unchanged');
    expect(readSummary(project, 'runs-summary.json').totals.sessions).toBe(6);
  }, 120_000);

  it('one writer - run analyze, logs summary, run analyze: the summary stage is up to date the second time; the command writes its own files', async () => {
    project = tempProject();
    cpSync(path.join(REPO_ROOT, 'pipelines/analyze.yaml'), project.path('pipelines/analyze.yaml'));
    generateLogs({ outDir: project.path(LOGS), seed: 5, scripts: fleetScripts(3) });
    const first = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    expect(stageEnds(first.stdout).summary).toBe('succeeded');
    const stageFile = readFileSync(project.path(path.join(LOGS, 'runs-summary.json')), 'utf8');
    const cli = await runCli(['logs', 'summary'], { cwd: project.root });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stderr).toMatch(/analyzed 0 turn\(s\), \d+ up to date/);
    expect(readFileSync(project.path(path.join(LOGS, 'runs-summary.json')), 'utf8')).toBe(stageFile);
    expect(readSummary(project).totals).toEqual(readSummary(project, 'runs-summary.json').totals);
    const again = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
    expect(again.code, again.stderr).toBe(0);
    expect(stageEnds(again.stdout).summary).toBe('fresh');
  }, 120_000);
});
