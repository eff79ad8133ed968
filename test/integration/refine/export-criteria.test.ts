// `refinery refine export-criteria SESSION --format massgen-checklist|eval-criteria` through the real CLI.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CRITERIA } from '../../../src/workflows/refine/criteria.ts';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject;
beforeAll(() => {
  project = tempProject({
    '.refinery/sessions/s1/criteria.json': JSON.stringify({ schema_version: '1', source: 'default', criteria: DEFAULT_CRITERIA }),
    '.refinery/sessions/bad/criteria.json': JSON.stringify({ criteria: [{ text: 'no id' }] }),
  });
});
afterAll(() => project.cleanup());

describe('refinery refine export-criteria', () => {
  it("refine export-criteria - massgen-checklist prints the bare array MassGen's quality server keeps in sessions/<id>/criteria.json", async () => {
    const run = await runCli(['refine', 'export-criteria', 's1', '--format', 'massgen-checklist'], { cwd: project.root });
    expect(run.code, run.stderr).toBe(0);
    const list = JSON.parse(run.stdout) as Array<Record<string, string>>;
    expect(Array.isArray(list)).toBe(true);
    // The server indexes each entry by key; the wrapped {criteria: [...]} form made that fail.
    expect(list.map((c) => [c.id, c.category, typeof c.text, typeof c.rationale])).toEqual([
      ['E1', 'standard', 'string', 'string'],
      ['E2', 'standard', 'string', 'string'],
      ['E3', 'primary', 'string', 'string'],
      ['E4', 'standard', 'string', 'string'],
    ]);
  });

  it('refine export-criteria - the default format is the wrapped form --eval-criteria reads; --out writes it to a file', async () => {
    const run = await runCli(['refine', 'export-criteria', 's1', '--out', 'massgen/criteria.json'], { cwd: project.root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('wrote 4 criteria (eval-criteria) to massgen/criteria.json');
    const file = JSON.parse(readFileSync(project.path('massgen/criteria.json'), 'utf8'));
    expect(file.criteria.map((c: { text: string }) => c.text)).toEqual(DEFAULT_CRITERIA.map((c) => c.text));
    expect(file.criteria[0]).toMatchObject({
      anti_patterns: DEFAULT_CRITERIA[0]?.anti_patterns,
      score_anchors: DEFAULT_CRITERIA[0]?.score_anchors,
    });
  });

  it('refine export-criteria - a bad session name, a missing session, an invalid file and an unknown format each say what to do, and write nothing', async () => {
    const traversal = await runCli(['refine', 'export-criteria', '../s1', '--out', 'x.json'], { cwd: project.root });
    expect(traversal).toMatchObject({ code: 2, stdout: '' });
    expect(traversal.stderr).toContain("session '../s1': a session name is 1-64 letters");
    const missing = await runCli(['refine', 'export-criteria', 'nosuch'], { cwd: project.root });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(
      '.refinery/sessions/nosuch/criteria.json does not exist; run the refine pipeline for this session first',
    );
    const invalid = await runCli(['refine', 'export-criteria', 'bad', '--out', 'y.json'], { cwd: project.root });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('.refinery/sessions/bad/criteria.json is not a criteria document');
    expect(invalid.stderr).toContain('refinery validate .refinery/sessions/bad/criteria.json --schema eval-criteria');
    const format = await runCli(['refine', 'export-criteria', 's1', '--format', 'yaml'], { cwd: project.root });
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('--format must be one of massgen-checklist, eval-criteria');
    expect(existsSync(project.path('x.json')) || existsSync(project.path('y.json'))).toBe(false);
    for (const r of [traversal, missing, invalid, format]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
