// The experiments pipeline with a remote cache (a real nginx, WebDAV PUT): a second clone gets each
// cell's experiment.json and analysis from the cache and starts no MassGen run; the log dir comes
// along only when it is under the cap the user set (log_dir_cap_mb).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import { events, REPO_ROOT, runCli, stageEnds, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';

const FAKE = path.join(REPO_ROOT, 'test/helpers/fake-massgen.mjs');

describe.skipIf(skipWithout(NGINX))('experiments with a remote cache', () => {
  let ngx: NginxCache;
  const clones: TempProject[] = [];
  beforeAll(async () => {
    ngx = await startNginxCache();
  });
  afterAll(async () => {
    for (const c of clones) c.cleanup();
    await ngx?.dispose();
  });

  const clone = (question: string): TempProject => {
    const p = tempProject({ 'configs/a.yaml': 'agents:\n  - id: agent_a\n# fake-massgen: duration_ms=200\n', 'q.txt': `${question}\n` });
    clones.push(p);
    return p;
  };
  const experiments = (p: TempProject, capMb: string): Promise<CliResult> =>
    runCli(
      [
        'run',
        'experiments',
        '-k',
        '--json',
        ...['--param', 'configs=configs/a.yaml', '--param', 'questions=q.txt', '--param', `massgen=node ${FAKE}`],
        ...['--param', `log_dir_cap_mb=${capMb}`],
      ],
      { cwd: p.root, env: { REFINERY_REMOTE_CACHE: ngx.url, FAKE_MASSGEN_CALLS: p.path('calls.txt') } },
    );
  const runStarts = (p: TempProject): number =>
    existsSync(p.path('calls.txt'))
      ? readFileSync(p.path('calls.txt'), 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('run ')).length
      : 0;
  const cellDir = (p: TempProject): string => {
    const cells = p.path('.refinery/experiments/cells');
    return path.join(cells, readdirSync(cells)[0] as string);
  };
  const codes = (r: CliResult): Record<string, string> =>
    Object.fromEntries(events(r.stdout).flatMap((e) => (e.type === 'stage-end' ? [[String(e.stage), String(e.code)]] : [])));

  it('experiments-cache - a second clone gets experiment.json, the analysis and the log dir under the cap, with 0 MassGen runs', async () => {
    const a = clone('What is the capital of France?');
    const b = clone('What is the capital of France?');
    const first = await experiments(a, '5');
    expect(first.code, first.stderr).toBe(0);
    expect(runStarts(a)).toBe(1);

    const second = await experiments(b, '5');
    expect(second.code, second.stderr).toBe(0);
    expect(runStarts(b)).toBe(0);
    const got = codes(second);
    const id = (stage: string): string => Object.keys(got).find((k) => k.startsWith(`${stage}[`)) as string;
    expect(got[id('run')]).toBe('from-remote-cache');
    expect(got[id('analyze')]).toBe('from-remote-cache');
    // The log dir is not a file the cache has: it comes packed, and is put in place here.
    expect(stageEnds(second.stdout)[id('restore_log')]).toBe('succeeded');
    for (const file of ['experiment.json', 'analysis.json', 'ANALYSIS_REPORT.md'])
      expect(readFileSync(path.join(cellDir(b), file), 'utf8'), file).toBe(readFileSync(path.join(cellDir(a), file), 'utf8'));
    const record = JSON.parse(readFileSync(path.join(cellDir(b), 'experiment.json'), 'utf8')) as { log_dir: string };
    expect(readFileSync(b.path(`${record.log_dir}/turn_1/final/agent_b/answer.txt`), 'utf8')).toBe(
      readFileSync(a.path(`${record.log_dir}/turn_1/final/agent_b/answer.txt`), 'utf8'),
    );
    const restored = JSON.parse(readFileSync(path.join(cellDir(b), 'log-restored.json'), 'utf8'));
    expect(restored).toMatchObject({ log_dir: record.log_dir, packed: true, restored: true });

    // Up to date from then on: nothing runs again (not even the version and config stages), the log dir stays.
    const third = await experiments(b, '5');
    expect(third.code, third.stderr).toBe(0);
    expect(
      Object.entries(stageEnds(third.stdout))
        .filter(([, s]) => s === 'succeeded')
        .map(([k]) => k),
    ).toEqual([]);
    expect(runStarts(b)).toBe(0);
  });

  it('experiments-cache - a log dir over the cap is not shared: the second clone has the records and no log dir', async () => {
    const a = clone('Why is the sky blue?');
    const b = clone('Why is the sky blue?');
    // The fake's finished run (a real MassGen log) is far over 1 KB.
    const first = await experiments(a, '0.001');
    expect(first.code, first.stderr).toBe(0);
    const second = await experiments(b, '0.001');
    expect(second.code, second.stderr).toBe(0);
    expect(runStarts(b)).toBe(0);
    const record = JSON.parse(readFileSync(path.join(cellDir(b), 'experiment.json'), 'utf8')) as { log_dir: string };
    expect(existsSync(path.join(cellDir(b), 'analysis.json'))).toBe(true);
    expect(existsSync(b.path(record.log_dir))).toBe(false);
    expect(JSON.parse(readFileSync(path.join(cellDir(b), 'log-restored.json'), 'utf8'))).toMatchObject({
      packed: false,
      restored: false,
      reason: expect.stringMatching(/over the cap of 1000 \(param log_dir_cap_mb\)/),
    });
  });
});
