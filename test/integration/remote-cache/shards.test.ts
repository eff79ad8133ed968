// CI shards through the remote cache: `--shard 1/3`, `2/3` and `3/3`, each in its own clone (as
// the jobs of a CI matrix), together produce exactly the artifacts of one unsharded run, each
// stage executed once; what a shard needs from another comes from the cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProject, events, runCli, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { artifacts, exampleClone, runAnalyze, stageStarts, warnings } from './clones.ts';

const ITEMS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'];
const PIPELINE = `pipeline: sharded
stages:
  item:
    foreach: [${ITEMS.join(', ')}]
    run: "echo \${item} | cat - src/base.txt > \${outputs.o}"
    inputs: [src/base.txt]
    outputs: { o: "out/items/\${item}.txt" }
  all:
    needs: [item]
    run: "cat out/items/*.txt > \${outputs.o}"
    inputs: ["out/items/*.txt"]
    outputs: { o: out/all.txt }
`;

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.cleanup();
});

function track(p: TempProject): TempProject {
  projects.push(p);
  return p;
}

function union(parts: Array<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of parts) {
    for (const [k, v] of Object.entries(part)) {
      // Two shards that both publish a path (a dependency) must agree on it.
      if (k in out) expect(v, k).toBe(out[k]);
      out[k] = v;
    }
  }
  return out;
}

describe.skipIf(skipWithout(NGINX))('CI shards with a remote cache on nginx', () => {
  let ngx: NginxCache;
  beforeAll(async () => {
    ngx = await startNginxCache();
  });
  afterAll(async () => {
    await ngx?.dispose();
  });

  it('shards - 1/3, 2/3 and 3/3, then the run without --shard, produce exactly the artifacts of one unsharded run, each stage executed once', async () => {
    const files = { 'pipelines/sharded.yaml': PIPELINE, 'src/base.txt': 'base\n' };
    const whole = track(tempProject(files));
    const unsharded = await runCli(['run', 'sharded', '--json'], { cwd: whole.root });
    expect(unsharded.code, unsharded.stderr).toBe(0);
    const expected = artifacts(whole, unsharded);
    expect(Object.keys(expected)).toHaveLength(ITEMS.length + 1);

    const env = { REFINERY_REMOTE_CACHE: `${ngx.url}/sharded` };
    const parts: Array<Record<string, string>> = [];
    const executed: string[] = [];
    for (const shard of ['1/3', '2/3', '3/3']) {
      const clone = track(tempProject(files));
      const result = await runCli(['run', 'sharded', '--json', '--shard', shard], { cwd: clone.root, env });
      expect(result.code, result.stderr).toBe(0);
      expect(warnings(result)).toEqual([]);
      parts.push(artifacts(clone, result));
      executed.push(...stageStarts(result));
      // The fan-in needs every share: no shard runs it, and each says so.
      expect(result.stderr).toContain('--shard: all needs stages of several shares');
    }
    // The matrix's last job: the whole pipeline, every item from the cache, the fan-in run here.
    const last = track(tempProject(files));
    const final = await runCli(['run', 'sharded', '--json'], { cwd: last.root, env });
    expect(final.code, final.stderr).toBe(0);
    executed.push(...stageStarts(final));
    expect(artifacts(last, final)).toEqual(expected);
    expect(union([...parts, artifacts(last, final)])).toEqual(expected);
    expect(executed.sort()).toEqual([...ITEMS.map((i) => `item[${i}]`), 'all'].sort());
  });

  it("shards - the analyze example spreads its turns over the shards: each runs its share, none runs another's", async () => {
    const whole = track(exampleClone());
    const unsharded = await runAnalyze(whole);
    expect(unsharded.code, unsharded.stderr).toBe(0);
    const env = { REFINERY_REMOTE_CACHE: `${ngx.url}/analyze` };
    const results: CliResult[] = [];
    const parts: Array<Record<string, string>> = [];
    for (const shard of ['1/3', '2/3', '3/3']) {
      const clone = track(exampleClone());
      const result = await runAnalyze(clone, env, '--shard', shard);
      expect(result.code, result.stderr).toBe(0);
      results.push(result);
      parts.push(artifacts(clone, result));
    }
    expect(results.map((r) => stageStarts(r).length)).toEqual([2, 2, 2]);
    expect(new Set(results.flatMap(stageStarts)).size).toBe(6);
    // The summary needs every turn: the run after the matrix makes it, with every turn from the cache.
    const last = track(exampleClone());
    const final = await runAnalyze(last, env);
    expect(final.code, final.stderr).toBe(0);
    expect(stageStarts(final)).toEqual(['summary']);
    parts.push(artifacts(last, final));
    // The same files; their text names the moment of analysis (analyzedAt, "heartbeat N s ago"),
    // so the exact comparison is the deterministic pipeline's above: here, what each turn concluded.
    const sharded = union(parts);
    const alone = artifacts(whole, unsharded);
    expect(Object.keys(sharded).sort()).toEqual(Object.keys(alone).sort());
    const verdicts = (files: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(files)
          .filter(([k]) => k.endsWith('analysis.json'))
          .map(([k, v]) => [k, (JSON.parse(v) as { state: { value: string } }).state.value]),
      );
    expect(verdicts(sharded)).toEqual(verdicts(alone));
  });

  it('shards - a share with nothing in it runs nothing and passes; a bad --shard or --shard with --only is refused', async () => {
    const p = track(demoProject());
    const empty = await runCli(['run', 'demo', '--json', '--shard', '3/3'], { cwd: p.root });
    expect(empty.code, empty.stderr).toBe(0);
    expect(events(empty.stdout).filter((e) => e.type === 'stage-start' || e.type === 'stage-end')).toEqual([]);
    expect(events(empty.stdout).find((e) => e.type === 'run-start')?.stages).toBe(0);
    const bad = await runCli(['run', 'demo', '--shard', '4/3'], { cwd: p.root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('refinery run: --shard 4/3: I must be between 1 and N (3)\n');
    const both = await runCli(['run', 'demo', '--shard', '1/2', '--only', 'a'], { cwd: p.root });
    expect(both.code).toBe(2);
    expect(both.stderr).toBe('refinery run: --shard and --only choose stages each; give one of them\n');
  });
});
