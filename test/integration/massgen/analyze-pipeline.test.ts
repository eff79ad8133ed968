import { cpSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { REPO_ROOT, events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

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
