// Two clones of a project in different folders compute the same stage fingerprints and the same
// LLM cache keys: nothing of the folder (or of a file's inode or mtime) enters them.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { exampleClone, fingerprints, llmCacheKeys, runAnalyze, runRefine, stageStarts } from './clones.ts';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

function track(p: TempProject): TempProject {
  cleanup.push(() => p.cleanup());
  return p;
}

describe('portable fingerprints', () => {
  it('clones - the analyze and refine examples in two folders get the same fingerprints and LLM cache keys', async () => {
    const a = track(exampleClone());
    const b = track(exampleClone());
    for (const p of [a, b]) {
      const analyze = await runAnalyze(p);
      expect(analyze.code, analyze.stderr).toBe(0);
      const refine = await runRefine(p);
      expect(refine.code, refine.stderr).toBe(0);
    }
    expect(Object.keys(fingerprints(a, 'analyze'))).toHaveLength(7);
    // The runs summary reads the turns' analysis.json files, which record when they were made: like
    // refine's summary below, its fingerprint follows its inputs. Every turn's is the same.
    const { summary: analyzeSummaryA, ...turnsA } = fingerprints(a, 'analyze');
    const { summary: analyzeSummaryB, ...turnsB } = fingerprints(b, 'analyze');
    expect(analyzeSummaryA).toBeDefined();
    expect(analyzeSummaryB).toBeDefined();
    expect(Object.keys(turnsA)).toHaveLength(6);
    expect(turnsB).toEqual(turnsA);
    // summary reads the usage.json files, which record their run's id and latencies: its
    // fingerprint follows its inputs, equal only where they came from one run (the remote cache).
    const { summary: summaryA, ...refineA } = fingerprints(a, 'refine');
    const { summary: summaryB, ...refineB } = fingerprints(b, 'refine');
    expect(summaryA).toBeDefined();
    expect(summaryB).toBeDefined();
    expect(Object.keys(refineA)).toHaveLength(6);
    expect(refineB).toEqual(refineA);
    expect(llmCacheKeys(a).length).toBeGreaterThanOrEqual(5);
    expect(llmCacheKeys(b)).toEqual(llmCacheKeys(a));
  });

  it('moved - a project copied to another folder (new inodes and mtimes) is up to date there: nothing runs', async () => {
    const a = track(exampleClone());
    expect((await runAnalyze(a)).code).toBe(0);
    expect((await runRefine(a)).code).toBe(0);
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'refinery-moved-'));
    cleanup.push(() => rmSync(elsewhere, { recursive: true, force: true }));
    const b = path.join(elsewhere, 'deeper', 'folder', 'clone');
    cpSync(a.root, b, { recursive: true, verbatimSymlinks: true });
    // No stat record can vouch for the copy: the fingerprints are computed again from content.
    rmSync(path.join(b, '.refinery/cache/file-hashes.json'), { force: true });
    for (const f of readdirSync(path.join(b, '.refinery/state')).filter((f) => f.startsWith('noop-')))
      rmSync(path.join(b, '.refinery/state', f));
    const moved = { root: b } as TempProject;
    for (const result of [await runAnalyze(moved), await runRefine(moved)]) {
      expect(result.code, result.stderr).toBe(0);
      expect(stageStarts(result)).toEqual([]);
      // Up to date, or skipped by its `when` (the worker of round 1) as in the first run.
      expect(Object.entries(stageEnds(result.stdout)).filter(([, s]) => s !== 'fresh' && s !== 'skipped')).toEqual([]);
      expect(Object.values(stageEnds(result.stdout))).toContain('fresh');
    }
  });

  it('clones - an absolute input kept in another place on each machine enters by its content only', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'refinery-outside-'));
    cleanup.push(() => rmSync(outside, { recursive: true, force: true }));
    const pipeline = `pipeline: p
params:
  tool_config: { type: string }
stages:
  s:
    run: "cat src/a.txt > \${outputs.o}"
    inputs: [src/a.txt, "\${params.tool_config}"]
    outputs: { o: out/o.txt }
`;
    const fp: string[] = [];
    for (const [i, content] of ['shared settings\n', 'shared settings\n', 'other settings\n'].entries()) {
      const config = path.join(outside, `machine-${i}`, 'tools', 'lint.cfg');
      mkdirSync(path.dirname(config), { recursive: true });
      writeFileSync(config, content);
      const p = track(tempProject({ 'pipelines/p.yaml': pipeline, 'src/a.txt': 'alpha\n' }));
      const result = await runCli(['run', 'p', '--param', `tool_config=${config}`], { cwd: p.root });
      expect(result.code, result.stderr).toBe(0);
      fp.push(fingerprints(p, 'p').s as string);
    }
    expect(fp[1]).toBe(fp[0]);
    expect(fp[2]).not.toBe(fp[0]);
  });
});
