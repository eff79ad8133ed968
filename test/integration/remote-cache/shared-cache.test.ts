// The remote cache on a real nginx (WebDAV PUT) on 127.0.0.1: clone A runs the analyze and refine
// examples and uploads; clone B, in another folder, gets every result from the cache: no stage
// executed, no model called, the same artifacts byte for byte.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { artifacts, exampleClone, fingerprints, modelCalls, runAnalyze, runEnd, runRefine, stageStarts, warnings } from './clones.ts';

describe.skipIf(skipWithout(NGINX))('remote cache on nginx: two clones', () => {
  let ngx: NginxCache;
  const clones: TempProject[] = [];
  beforeAll(async () => {
    ngx = await startNginxCache();
  });
  afterAll(async () => {
    for (const c of clones) c.cleanup();
    await ngx?.dispose();
  });

  it('clone B - runs the analyze and refine examples with 0 stages executed and 0 model calls, and identical artifacts', async () => {
    const env = { REFINERY_REMOTE_CACHE: ngx.url };
    const a = exampleClone();
    const b = exampleClone();
    clones.push(a, b);
    const analyzeA = await runAnalyze(a, env);
    const refineA = await runRefine(a, env);
    for (const r of [analyzeA, refineA]) {
      expect(r.code, r.stderr).toBe(0);
      expect(warnings(r)).toEqual([]);
    }
    expect(stageStarts(analyzeA)).toHaveLength(7);
    expect(modelCalls(refineA)).toBeGreaterThanOrEqual(5);
    expect(runEnd(analyzeA).remote).toMatchObject({ url: ngx.url, readOnly: false, stages: 0, uploaded: 7, refused: 0, problems: 0 });
    const putsBefore = ngx.requests().filter((r) => r.method === 'PUT').length;

    const analyzeB = await runAnalyze(b, env);
    const refineB = await runRefine(b, env);
    for (const r of [analyzeB, refineB]) {
      expect(r.code, r.stderr).toBe(0);
      expect(warnings(r)).toEqual([]);
      expect(stageStarts(r)).toEqual([]);
      expect(modelCalls(r)).toBe(0);
      for (const e of events(r.stdout).filter((e) => e.type === 'stage-end' && e.status === 'succeeded')) {
        expect(e.remote, String(e.stage)).toEqual({ savedMs: expect.any(Number), savedUsd: expect.any(Number) });
        expect(e.code, String(e.stage)).toBe('from-remote-cache');
      }
    }
    expect(artifacts(b, analyzeB)).toEqual(artifacts(a, analyzeA));
    expect(artifacts(b, refineB)).toEqual(artifacts(a, refineA));
    expect(Object.keys(artifacts(b, refineB)).length).toBeGreaterThanOrEqual(15);
    // Recorded as the stages' results: the same fingerprints as where they ran, and up to date next time.
    expect(fingerprints(b, 'analyze')).toEqual(fingerprints(a, 'analyze'));
    expect(fingerprints(b, 'refine')).toEqual(fingerprints(a, 'refine'));
    expect(runEnd(analyzeB).remote).toMatchObject({ stages: 7, calls: 0, uploaded: 0, refused: 0 });
    const refineSummary = runEnd(refineB).remote as { stages: number; calls: number; savedUsd: number; savedMs: number };
    expect(refineSummary.stages).toBe(stageStarts(refineA).length);
    expect(refineSummary.calls).toBe(modelCalls(refineA));
    expect(refineSummary.savedUsd).toBeGreaterThan(0);
    // Nothing to store: every result was already there.
    expect(ngx.requests().filter((r) => r.method === 'PUT')).toHaveLength(putsBefore);

    const again = await runRefine(b, env);
    expect(stageStarts(again)).toEqual([]);
    expect(
      Object.values(
        Object.fromEntries(
          events(again.stdout)
            .filter((e) => e.type === 'stage-end')
            .map((e) => [e.stage, e.status]),
        ),
      ).every((s) => s === 'fresh' || s === 'skipped'),
    ).toBe(true);

    const status = await runCli(['status'], { cwd: b.root });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(
        `remote cache ${ngx.url.replace(/[.]/g, '\\.')}: 7 stages and ${modelCalls(refineA)} model calls from it, saving [0-9.]+m?s and \\$[0-9.]+`,
      ),
    );
    expect(status.stdout).toContain(`remote cache ${ngx.url}: 7 stages and 0 model calls from it`);
  });

  it('model answers - a stage run again elsewhere gets every answer from the remote cache: $0, no call made', async () => {
    // A path prefix of its own: an empty cache for this test on the same server.
    const env = { REFINERY_REMOTE_CACHE: `${ngx.url}/answers` };
    const a = exampleClone();
    const c = exampleClone();
    clones.push(a, c);
    const first = await runRefine(a, env, '--only', 'criteria');
    expect(first.code, first.stderr).toBe(0);
    const made = modelCalls(first);
    expect(made).toBeGreaterThanOrEqual(1);
    // --force: the stage runs here instead of being restored; its model calls go to the caches.
    const forced = await runRefine(c, env, '--only', 'criteria', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(stageStarts(forced)).toEqual(['criteria']);
    expect(modelCalls(forced)).toBe(0);
    const calls = events(forced.stdout).filter((e) => e.type === 'stage-report' && (e.report as { kind: string }).kind === 'llm-call');
    expect(calls).toHaveLength(made);
    expect(
      calls.every((e) => (e.report as { cached: boolean; costUsd: number }).cached && (e.report as { costUsd: number }).costUsd === 0),
    ).toBe(true);
    expect(runEnd(forced).remote).toMatchObject({ stages: 0, calls: made });
  });

  it('stale_if - a result that asks to be redone (a turn still in progress) is not shared; the others are', async () => {
    const pipeline = `pipeline: p
stages:
  open: { run: "echo '{\\"state\\": \\"in_progress\\"}' > \${outputs.o}", outputs: { o: out/open.json }, stale_if: "self.o.state == 'in_progress'" }
  done: { run: "echo '{\\"state\\": \\"completed\\"}' > \${outputs.o}", outputs: { o: out/done.json }, stale_if: "self.o.state == 'in_progress'" }
`;
    const env = { REFINERY_REMOTE_CACHE: `${ngx.url}/stale` };
    const a = tempProject({ 'pipelines/p.yaml': pipeline });
    const b = tempProject({ 'pipelines/p.yaml': pipeline });
    clones.push(a, b);
    const first = await runCli(['run', 'p', '--json'], { cwd: a.root, env });
    expect(first.code, first.stderr).toBe(0);
    expect(runEnd(first).remote).toMatchObject({ uploaded: 1 });
    const second = await runCli(['run', 'p', '--json'], { cwd: b.root, env });
    expect(second.code, second.stderr).toBe(0);
    expect(stageStarts(second)).toEqual(['open']);
    expect(runEnd(second).remote).toMatchObject({ stages: 1, uploaded: 0 });
  });
});
