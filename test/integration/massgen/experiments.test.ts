import { chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  events,
  interruptOnceItPrints,
  REPO_ROOT,
  runCli,
  stageEnds,
  startCli,
  tempProject,
  type TempProject,
} from '../../helpers/project.ts';

const FAKE = path.join(REPO_ROOT, 'test/helpers/fake-massgen.mjs');
const MASSGEN = `node ${FAKE}`;
const QUESTIONS = 'What is the capital of France?\nWhy is the sky blue?\n';

let project: TempProject | undefined;
afterEach(() => {
  project?.cleanup();
  project = undefined;
});

/** A project with configs (name -> `# fake-massgen:` options) and a questions file. */
function grid(configs: Record<string, string>, questions = QUESTIONS): TempProject {
  const files: Record<string, string> = { 'questions.txt': questions };
  for (const [name, fake] of Object.entries(configs)) files[name] = `agents:\n  - id: agent_a\n# fake-massgen: ${fake}\n`;
  project = tempProject(files);
  return project;
}

function experiments(p: TempProject, params: Record<string, string>, flags: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const args = ['run', 'experiments', '-k', '--json', '-j', '4'];
  for (const [k, v] of Object.entries({ configs: 'configs/*.yaml', questions: 'questions.txt', massgen: MASSGEN, ...params }))
    args.push('--param', `${k}=${v}`);
  return runCli([...args, ...flags], { cwd: p.root, env: { FAKE_MASSGEN_CALLS: p.path('calls.txt'), ...env } });
}

/** The MassGen runs started so far (not --version). */
function runStarts(p: TempProject): string[] {
  const file = p.path('calls.txt');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('run '))
    : [];
}

/** Every MassGen process started so far: runs and `--version`. */
function massgenStarts(p: TempProject): string[] {
  const file = p.path('calls.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

/**
 * A MassGen installed in a venv as pip installs one: a console script in venv/bin and the
 * package's dist-info, whose name the script reads its version from, as `massgen --version`
 * reads the installed package's.
 */
function installMassgen(p: TempProject, version: string, script = 'massgen'): void {
  rmSync(p.path('venv/lib'), { recursive: true, force: true });
  p.write(`venv/lib/python3.12/site-packages/massgen-${version}.dist-info/METADATA`, `Name: massgen\nVersion: ${version}\n`);
  const bin = p.write(
    'venv/bin/massgen',
    `#!/bin/sh\n# ${script}\nv=$(ls "$(dirname "$0")/../lib/python3.12/site-packages" | sed -n 's/^massgen-\\(.*\\)\\.dist-info$/\\1/p')\nFAKE_MASSGEN_VERSION=$v exec node '${FAKE}' "$@"\n`,
  );
  chmodSync(bin, 0o755);
}

function runStatuses(stdout: string): Record<string, string> {
  return Object.fromEntries(Object.entries(stageEnds(stdout)).filter(([id]) => id.startsWith('run[')));
}

/** A process that still runs: a zombie (killed, not yet reaped by whoever adopted it) does not. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('experiments pipeline', () => {
  it('experiments - a 2 × 2 grid runs each cell once, live, and an unchanged rerun starts no MassGen run', async () => {
    // The slow config's runs span several status.json reads (every 500 ms): they show progress
    // while they run. Every run, however short, ends with its final status as progress.
    const p = grid({ 'configs/two agents.yaml': 'duration_ms=2000 tick_ms=100', 'configs/fast.yaml': 'duration_ms=300' });
    const first = await experiments(p, {});
    expect(first.code, first.stderr).toBe(0);
    const runs = runStatuses(first.stdout);
    expect(Object.keys(runs).sort()).toEqual([
      'run[configs/fast.yaml, What is the capital of France?, 1]',
      'run[configs/fast.yaml, Why is the sky blue?, 1]',
      'run[configs/two agents.yaml, What is the capital of France?, 1]',
      'run[configs/two agents.yaml, Why is the sky blue?, 1]',
    ]);
    expect(Object.values(runs)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(runStarts(p)).toHaveLength(4);
    // Live progress: each run's stage-progress events carry the phase and each agent's status.
    const progress = events(first.stdout).filter((e) => e.type === 'stage-progress' && String(e.stage).startsWith('run['));
    for (const id of Object.keys(runs)) {
      const mine = progress.filter((e) => e.stage === id);
      if (id.includes('two agents'))
        expect(mine.some((e) => /(initial_answer|enforcement) · agent_a \w+, agent_b \w+, agent_c \w+/.test(String(e.message)))).toBe(true);
      expect(mine.at(-1)?.fraction).toBe(1);
    }
    const summary = JSON.parse(readFileSync(p.path('.refinery/experiments/experiments.json'), 'utf8'));
    expect(summary.totals).toMatchObject({ cells: 4, succeeded: 4, failed: 0, missing: 0 });
    expect(summary.per_config.map((c: { config: string; cells: number }) => [c.config, c.cells])).toEqual([
      ['configs/fast.yaml', 2],
      ['configs/two agents.yaml', 2],
    ]);
    expect(summary.cells[0]).toMatchObject({ winner: 'agent_b', answers: 3, votes: 3, ok: true });
    const record = JSON.parse(readFileSync(p.path(summary.cells[0].experiment), 'utf8'));
    expect(record).toMatchObject({ massgen_version: 'massgen 0.1.91', exit_code: 0, repeat: 1, config: 'configs/fast.yaml' });
    expect(record.log_dir).toMatch(/^\.massgen\/massgen_logs\/log_\d{8}_\d{6}_\d{6}$/);
    expect(existsSync(p.path(`${record.log_dir}/turn_1/final/agent_b/answer.txt`))).toBe(true);
    const report = readFileSync(p.path('.refinery/experiments/EXPERIMENTS.md'), 'utf8');
    expect(report).toContain('```mermaid');
    expect(report).toContain('| configs/two agents.yaml | 2 | 2 | 0 |');

    const second = await experiments(p, {});
    expect(second.code, second.stderr).toBe(0);
    expect(Object.values(runStatuses(second.stdout))).toEqual(['fresh', 'fresh', 'fresh', 'fresh']);
    expect(runStarts(p)).toHaveLength(4);
  });

  it('experiments - editing one config runs only its cells again', async () => {
    const p = grid({ 'configs/a.yaml': 'duration_ms=200', 'configs/b.yaml': 'duration_ms=200' });
    expect((await experiments(p, {})).code).toBe(0);
    p.write('configs/b.yaml', 'agents:\n  - id: agent_z\n# fake-massgen: duration_ms=200\n');
    const second = await experiments(p, {});
    expect(second.code, second.stderr).toBe(0);
    const runs = runStatuses(second.stdout);
    expect(
      Object.entries(runs)
        .filter(([, s]) => s === 'succeeded')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['run[configs/b.yaml, What is the capital of France?, 1]', 'run[configs/b.yaml, Why is the sky blue?, 1]']);
    expect(runStarts(p).slice(4)).toEqual(['run configs/b.yaml', 'run configs/b.yaml']);
  });

  it('experiments - a failing run fails its cell with its stderr and agent errors; the other cells go on', async () => {
    const p = grid({ 'configs/ok.yaml': 'duration_ms=200', 'configs/bad.yaml': 'mode=fail duration_ms=200' }, 'What is 2+2?\n');
    const result = await experiments(p, {});
    expect(result.code).toBe(1);
    const ends = stageEnds(result.stdout);
    expect(ends['check[configs/bad.yaml, What is 2+2?, 1]']).toBe('failed');
    expect(ends['check[configs/ok.yaml, What is 2+2?, 1]']).toBe('succeeded');
    expect(ends.summary).toBe('succeeded');
    const failed = events(result.stdout).find((e) => e.type === 'stage-end' && e.stage === 'check[configs/bad.yaml, What is 2+2?, 1]');
    expect(String(failed?.reason)).toContain('MassGen exited 1');
    expect(String(failed?.reason)).toContain('agent_a: Error code: 500');
    expect(String(failed?.reason)).toContain('RuntimeError: agent agent_a failed');
    const summary = JSON.parse(readFileSync(p.path('.refinery/experiments/experiments.json'), 'utf8'));
    expect(summary.totals).toMatchObject({ cells: 2, succeeded: 1, failed: 1 });
    // A failed run is tried again by the next run; the good one is not.
    const again = await experiments(p, {});
    expect(runStatuses(again.stdout)).toEqual({
      'run[configs/bad.yaml, What is 2+2?, 1]': 'succeeded',
      'run[configs/ok.yaml, What is 2+2?, 1]': 'fresh',
    });
  });

  it('experiments - a hanging run is stopped by timeout, its grandchild with it', async () => {
    const p = grid({ 'configs/hang.yaml': 'mode=hang tick_ms=100' }, 'What is 2+2?\n');
    const pids = p.path('pids.txt');
    const result = await runCli(
      [
        'run',
        'experiments',
        '-k',
        '--json',
        '--param',
        'configs=configs/hang.yaml',
        '--param',
        'question=What is 2+2?',
        '--param',
        `massgen=${MASSGEN}`,
        '--param',
        'timeout=2',
      ],
      { cwd: p.root, env: { FAKE_MASSGEN_PIDS: pids } },
    );
    expect(result.code).toBe(1);
    const failed = events(result.stdout).find((e) => e.type === 'stage-end' && e.stage === 'check[configs/hang.yaml, What is 2+2?, 1]');
    expect(String(failed?.reason)).toContain('ran past the timeout of 2 s');
    const grandchildren = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(grandchildren).toHaveLength(1);
    expect(grandchildren.filter(alive)).toEqual([]);
  });

  it('experiments - Ctrl-C mid-grid stops the runs; the rerun runs only the cells that did not finish', async () => {
    const p = grid({ 'configs/a.yaml': 'duration_ms=300', 'configs/slow.yaml': 'mode=hang tick_ms=200' }, 'What is 2+2?\n');
    const child = startCli(
      [
        'run',
        'experiments',
        '-k',
        '-j',
        '4',
        '--param',
        'configs=configs/*.yaml',
        '--param',
        'questions=questions.txt',
        '--param',
        `massgen=${MASSGEN}`,
      ],
      { cwd: p.root, env: { FAKE_MASSGEN_CALLS: p.path('calls.txt'), FAKE_MASSGEN_PIDS: p.path('pids.txt') } },
    );
    // Once the quick cell is done (its check passed), the slow one is still running.
    const code = await interruptOnceItPrints(child, '✓ check[configs/a.yaml');
    expect(code).not.toBe(0);
    expect(runStarts(p).sort()).toEqual(['run configs/a.yaml', 'run configs/slow.yaml']);
    expect(readFileSync(p.path('pids.txt'), 'utf8').trim().split('\n').map(Number).filter(alive)).toEqual([]);
    // The same config, MassGen behaving this time: the interrupted cell has no record, so it runs again.
    const rerun = await experiments(p, {}, [], { FAKE_MASSGEN_OVERRIDE: 'mode=ok duration_ms=300' });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(runStatuses(rerun.stdout)).toEqual({
      'run[configs/a.yaml, What is 2+2?, 1]': 'fresh',
      'run[configs/slow.yaml, What is 2+2?, 1]': 'succeeded',
    });
  });

  it('experiments - a status.json met half-written is waited out, not an error', async () => {
    const p = grid({ 'configs/a.yaml': 'duration_ms=1200 tick_ms=300 half_written=1' }, 'What is 2+2?\n');
    const result = await experiments(p, {});
    expect(result.code, result.stderr).toBe(0);
    const progress = events(result.stdout).filter((e) => e.type === 'stage-progress' && String(e.stage).startsWith('run['));
    expect(progress.some((e) => String(e.message).includes('agent_a'))).toBe(true);
  });
  it('experiments - an unchanged grid starts no MassGen process, not even massgen --version', async () => {
    const p = grid({ 'configs/a.yaml': 'duration_ms=200', 'configs/b.yaml': 'duration_ms=200' }, 'What is 2+2?\n');
    const first = await experiments(p, {});
    expect(first.code, first.stderr).toBe(0);
    expect(massgenStarts(p).sort()).toEqual(['run configs/a.yaml', 'run configs/b.yaml', 'version']);
    const second = await experiments(p, {});
    expect(second.code, second.stderr).toBe(0);
    expect(Object.values(stageEnds(second.stdout)).every((s) => s === 'fresh' || s === 'skipped')).toBe(true);
    expect(massgenStarts(p)).toHaveLength(3);
  });

  it('experiments - a replaced massgen program or a new install of it (dist-info) runs every cell again, then nothing', async () => {
    const p = grid({ 'configs/a.yaml': 'duration_ms=200', 'configs/b.yaml': 'duration_ms=200' }, 'What is 2+2?\n');
    installMassgen(p, '0.1.91');
    const params = { massgen: 'venv/bin/massgen' };
    expect((await experiments(p, params)).code).toBe(0);
    const cells = ['run[configs/a.yaml, What is 2+2?, 1]', 'run[configs/b.yaml, What is 2+2?, 1]'];
    const version = (): string => JSON.parse(readFileSync(p.path('.refinery/experiments/massgen-version.json'), 'utf8')).version;
    expect(version()).toBe('massgen 0.1.91');

    // Another program in its place (pip's console script rewritten for a new release).
    installMassgen(p, '0.1.92', 'massgen, rebuilt');
    const replaced = await experiments(p, params);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(runStatuses(replaced.stdout)).toEqual(Object.fromEntries(cells.map((c) => [c, 'succeeded'])));
    expect(version()).toBe('massgen 0.1.92');
    expect(massgenStarts(p).slice(3).sort()).toEqual(['run configs/a.yaml', 'run configs/b.yaml', 'version']);

    // pip install -U with the same console script: only the dist-info says the version changed.
    installMassgen(p, '0.1.93', 'massgen, rebuilt');
    const upgraded = await experiments(p, params);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(runStatuses(upgraded.stdout)).toEqual(Object.fromEntries(cells.map((c) => [c, 'succeeded'])));
    expect(version()).toBe('massgen 0.1.93');

    const unchanged = await experiments(p, params);
    expect(unchanged.code, unchanged.stderr).toBe(0);
    expect(massgenStarts(p)).toHaveLength(9);
  });

  it("experiments - editing a file a config names runs only that config's cells again, and reads only that config again", async () => {
    const p = grid({ 'configs/b.yaml': 'duration_ms=200' });
    p.write('configs/a.yaml', 'agents:\n  - id: agent_a\n    system_message_file: prompts/a.md\n# fake-massgen: duration_ms=200\n');
    p.write('prompts/a.md', 'You are careful.\n');
    expect((await experiments(p, {})).code).toBe(0);
    p.write('prompts/a.md', 'You are careful and brief.\n');
    const second = await experiments(p, {});
    expect(second.code, second.stderr).toBe(0);
    const ends = stageEnds(second.stdout);
    expect(ends).toMatchObject({ version: 'fresh', 'config[configs/a.yaml]': 'succeeded', 'config[configs/b.yaml]': 'fresh' });
    expect(
      Object.entries(runStatuses(second.stdout))
        .filter(([, s]) => s === 'succeeded')
        .map(([id]) => id)
        .sort(),
    ).toEqual(['run[configs/a.yaml, What is the capital of France?, 1]', 'run[configs/a.yaml, Why is the sky blue?, 1]']);
    expect(massgenStarts(p).slice(5)).toEqual(['run configs/a.yaml', 'run configs/a.yaml']);
  });
});
