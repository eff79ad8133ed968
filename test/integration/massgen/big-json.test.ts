import { cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { REPO_ROOT, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const MiB = 1024 * 1024;
const LOG = 'log_20251201_093050_370528';
const TURN = `logs/${LOG}/turn_1`;

interface Analysis {
  warnings: Array<{ file: string; code: string; message: string }>;
  winner: { agentId: string | null };
}

/** A project holding one bundled example log (two turns) under logs/, and the analyze pipeline. */
function analyzeProject(): TempProject {
  const p = tempProject();
  cpSync(path.join(REPO_ROOT, 'examples/massgen_logs', LOG), p.path(`logs/${LOG}`), { recursive: true, verbatimSymlinks: true });
  cpSync(path.join(REPO_ROOT, 'pipelines/analyze.yaml'), p.path('pipelines/analyze.yaml'));
  return p;
}

/** Grows a JSON object file to at least `bytes` with a field no parser reads; it stays valid JSON. */
function pad(file: string, bytes: number): void {
  const value = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  writeFileSync(file, JSON.stringify({ ...value, padding: 'x'.repeat(bytes) }));
  expect(statSync(file).size).toBeGreaterThan(bytes);
}

function analysisOf(p: TempProject): Analysis {
  const analysis = JSON.parse(readFileSync(p.path(`${TURN}/analysis.json`), 'utf8')) as Analysis;
  expect(new SchemaRegistry(p.root).validate('turn-analysis', analysis)).toEqual({ ok: true });
  return analysis;
}

const tooLarge = (a: Analysis, file: string) => a.warnings.filter((w) => w.file === file && w.code === 'too-large');

describe('analyze - big JSON files', () => {
  it('analyze pipeline - a status.json over the default 16 MiB limit is skipped with a warning in analysis.json, and the turn is still analyzed', async () => {
    project = analyzeProject();
    pad(project.path(`${TURN}/attempt_1/status.json`), 20 * MiB);
    const result = await runCli(['run', 'analyze', '--json', '--param', 'logs=logs'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({
      [`turn[${LOG}/turn_1]`]: 'succeeded',
      [`turn[${LOG}/turn_2]`]: 'succeeded',
      summary: 'succeeded',
    });
    const analysis = analysisOf(project);
    const warnings = tooLarge(analysis, 'attempt_1/status.json');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/over the 16777216-byte limit .*skipped .*max_json_mb/);
    // What the other files say is still there.
    expect(analysis.winner.agentId).toBe('writer');
  });

  it('analyze pipeline - max_json_mb lowers the limit: a 2 MiB coordination_events.json is read by default and skipped with a warning at max_json_mb=1', async () => {
    project = analyzeProject();
    pad(project.path(`${TURN}/attempt_1/coordination_events.json`), 2 * MiB);
    const byDefault = await runCli(['run', 'analyze', '--json', '--param', 'logs=logs'], { cwd: project.root });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(tooLarge(analysisOf(project), 'attempt_1/coordination_events.json')).toEqual([]);
    const lowered = await runCli(['run', 'analyze', '--json', '--param', 'logs=logs', '--param', 'max_json_mb=1'], { cwd: project.root });
    expect(lowered.code, lowered.stderr).toBe(0);
    expect(stageEnds(lowered.stdout)).toEqual({
      [`turn[${LOG}/turn_1]`]: 'succeeded',
      [`turn[${LOG}/turn_2]`]: 'succeeded',
      summary: 'succeeded',
    });
    const warnings = tooLarge(analysisOf(project), 'attempt_1/coordination_events.json');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/over the 1048576-byte limit/);
  });
});
