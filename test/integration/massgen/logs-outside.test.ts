// Logs wherever they are: `refinery run analyze --param logs=PATH` with a folder outside the
// project writes nothing into it and puts the reports under .refinery/massgen/; a logs path
// that does not exist, or holds no MassGen run, stops the run with exit 2 naming it.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { analysesUnder, expectPartsAddUp, expectReportLinks, expectTotalsOf } from './summary-checks.ts';
import type { RunsSummary } from '../../../src/workflows/massgen/runs-summary-model.ts';

let project: TempProject | undefined;
const outside: string[] = [];
afterEach(() => {
  project?.cleanup();
  for (const dir of outside.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function outsideLogs(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'massgen-download-'));
  outside.push(dir);
  const logs = path.join(dir, 'massgen_logs');
  cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), logs, { recursive: true, verbatimSymlinks: true });
  return logs;
}

/** Every entry under a folder with its size and mtime: what "nothing was written there" compares. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const full = path.join(d, name);
      const st = statSync(full, { throwIfNoEntry: false });
      out.push(`${path.relative(dir, full)} ${st?.size ?? 'link'} ${st?.mtimeMs ?? ''}`);
      if (st?.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out;
}

function analyzeProject(): TempProject {
  const p = tempProject();
  cpSync(path.join(REPO_ROOT, 'pipelines/analyze.yaml'), p.path('pipelines/analyze.yaml'));
  return p;
}

const TURNS = [
  'log_20251201_090025_578526/turn_1',
  'log_20251201_091040_312100/turn_1',
  'log_20251201_092022_189443/turn_1',
  'log_20251201_093050_370528/turn_1',
  'log_20251201_093050_370528/turn_2',
  'log_20251201_094023_528453/turn_1',
];

describe('analyze logs outside the project', () => {
  it('analyze pipeline - an absolute logs path outside the project: reports under .refinery/massgen/<log_*>/<turn_N>/, the logs untouched, a second run does no work', async () => {
    project = analyzeProject();
    const logs = outsideLogs();
    const before = listing(logs);
    const first = await runCli(['run', 'analyze', '--json', '--param', `logs=${logs}`], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    const ends = stageEnds(first.stdout);
    expect(Object.keys(ends).sort()).toEqual(['summary', ...TURNS.map((t) => `turn[${t}]`)].sort());
    expect(Object.values(ends).every((s) => s === 'succeeded')).toBe(true);
    expect(listing(logs)).toEqual(before);
    const reports = project.path('.refinery/massgen');
    for (const turn of TURNS) {
      expect(readFileSync(path.join(reports, turn, 'ANALYSIS_REPORT.md'), 'utf8')).toContain('# MassGen Log Analysis Report');
    }
    const summary = JSON.parse(readFileSync(path.join(reports, 'runs-summary.json'), 'utf8')) as RunsSummary;
    expect(summary.logs).toBe(logs);
    expectTotalsOf(summary, analysesUnder(reports));
    expectPartsAddUp(summary);
    expectReportLinks(summary, reports);
    const second = await runCli(['run', 'analyze', '--json', '--param', `logs=${logs}`], { cwd: project.root });
    expect(Object.values(stageEnds(second.stdout)).every((s) => s === 'fresh')).toBe(true);
    // The CLI finds the same reports: every turn is analyzed, and the summary reads what the pipeline wrote.
    const list = JSON.parse((await runCli(['logs', 'list', '--json', '--logs-dir', logs], { cwd: project.root })).stdout) as {
      analyzedTurns: number;
      turns: number;
    }[];
    expect(list.every((r) => r.analyzedTurns === r.turns)).toBe(true);
    const cli = await runCli(['logs', 'summary', '--logs-dir', logs], { cwd: project.root });
    expect(cli.stderr).toContain('analyzed 0 turn(s), 6 up to date');
    expect(listing(logs)).toEqual(before);
  }, 120_000);

  it('analyze pipeline - a relative logs path leaving the project (../) is analyzed the same way', async () => {
    project = analyzeProject();
    const logs = outsideLogs();
    const relative = path.relative(project.root, logs);
    expect(relative.startsWith('..')).toBe(true);
    const run = await runCli(['run', 'analyze', '--json', '--param', `logs=${relative}`], { cwd: project.root });
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(project.path('.refinery/massgen')).sort()).toEqual(
      [...new Set(TURNS.map((t) => t.split('/')[0]))].concat(['RUNS_SUMMARY.md', 'runs-summary.json']).sort(),
    );
  }, 120_000);

  it('analyze pipeline - --param reports=DIR puts the analyses and the summary in that folder of the project', async () => {
    project = analyzeProject();
    const logs = outsideLogs();
    const run = await runCli(['run', 'analyze', '--json', '--param', `logs=${logs}`, '--param', 'reports=reports/massgen'], {
      cwd: project.root,
    });
    expect(run.code, run.stderr).toBe(0);
    for (const turn of TURNS) expect(statSync(project.path(path.join('reports/massgen', turn, 'analysis.json'))).size).toBeGreaterThan(0);
    expect(statSync(project.path('reports/massgen/RUNS_SUMMARY.md')).size).toBeGreaterThan(0);
  }, 120_000);

  it('analyze pipeline - a logs path that does not exist is exit 2 naming the path, with no stage run', async () => {
    project = analyzeProject();
    const typo = await runCli(['run', 'analyze', '--param', 'logs=.massgen/massgen_log'], { cwd: project.root });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain(`.massgen/massgen_log (${project.path('.massgen/massgen_log')}) does not exist`);
    expect(typo.stdout).not.toContain('nothing to do');
    const absolute = path.join(os.tmpdir(), 'refinery-no-such-logs-folder');
    const missing = await runCli(['run', 'analyze', '--param', `logs=${absolute}`], { cwd: project.root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${absolute} does not exist`);
  });

  it("analyze pipeline - a folder that holds no MassGen run is exit 2 naming it; one run's folder points at its parent", async () => {
    project = analyzeProject();
    mkdirSync(project.path('empty-logs'));
    const empty = await runCli(['run', 'analyze', '--param', 'logs=empty-logs'], { cwd: project.root });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('MassGen logs folder empty-logs');
    expect(empty.stderr).toContain('holds no log_* folder');
    mkdirSync(project.path('odd-logs/log_20250101_000000'), { recursive: true });
    writeFileSync(project.path('odd-logs/log_20250101_000000/notes.txt'), 'not a run');
    const odd = await runCli(['run', 'analyze', '--param', 'logs=odd-logs'], { cwd: project.root });
    expect(odd.code).toBe(2);
    expect(odd.stderr).toContain('holds 1 log_* folder(s) but no MassGen run in them');
    cpSync(path.join(REPO_ROOT, 'examples/massgen_logs/log_20251201_090025_578526'), project.path('one/log_20251201_090025_578526'), {
      recursive: true,
    });
    const one = await runCli(['run', 'analyze', '--param', 'logs=one/log_20251201_090025_578526'], { cwd: project.root });
    expect(one.code).toBe(2);
    expect(one.stderr).toContain(`is one run's folder, not the folder holding them; pass its parent folder (${project.path('one')})`);
  });
});
