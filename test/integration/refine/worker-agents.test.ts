// The refine loop's worker as a person (`worker=human`) and as an agent in a live tmux session
// (`worker=tmux:SESSION`), end to end through the real CLI on the bundled example; and the round count
// with a worker: max_rounds rounds hand work over (the last one included), then one final evaluation.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { events, REPO_ROOT, runCli, stageEnds, startCli, type CliResult, type TempProject } from '../../helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS, exampleProject } from '../../helpers/refine-example.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';

const WORKER = path.join(REPO_ROOT, 'test/helpers/scripted-worker.mjs');
const README = 'examples/refine/deliverable/README.md';

function readJson<T = Record<string, any>>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** The loop with max_rounds=1: round 1 iterates (recorded judges), the worker acts on it, round 2 is the final evaluation. */
function expectOneHandoverAndFinalRound(project: TempProject, run: CliResult, session: string, agent: string): void {
  expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr}`).toBe(0);
  const ends = stageEnds(run.stdout);
  expect(ends).toMatchObject({
    'rounds#1.work': 'skipped',
    'rounds#2.work': 'succeeded',
    'rounds#2.consensus': 'succeeded',
    summary: 'succeeded',
  });
  expect(Object.keys(ends).some((s) => s.startsWith('rounds#3'))).toBe(false);
  const dir = project.path(`.refinery/sessions/${session}`);
  expect(readJson(path.join(dir, 'round_001/worker.json'))).toMatchObject({ status: 'completed', agent });
  expect(readFileSync(project.path(README), 'utf8')).toContain('## Changes (round 1)');
  const summary = readJson(path.join(dir, 'summary.json'));
  expect(summary).toMatchObject({ stopped: { reason: 'max_rounds', round: 2 } });
  expect(summary.rounds.map((r: { round: number; worker?: unknown }) => [r.round, r.worker !== undefined])).toEqual([
    [1, true],
    [2, false],
  ]);
  expect(readFileSync(path.join(dir, 'SUMMARY.md'), 'utf8')).toContain('Round 2 is the final evaluation');
}

describe('refine worker rounds', () => {
  it('refine - max_rounds=1 with a worker: the worker acts after round 1 (the last round) and round 2 scores its changes', async () => {
    const project = exampleProject();
    try {
      cpSync(WORKER, project.path('scripted-worker.mjs'));
      const args = [
        'run',
        'refine',
        ...EXAMPLE_REFINE_PARAMS,
        '--json',
        '--param',
        'session=last',
        '--param',
        'max_rounds=1',
        '--param',
        'worker=node scripted-worker.mjs',
      ];
      const run = await runCli(args, { cwd: project.root });
      expectOneHandoverAndFinalRound(project, run, 'last', 'worker');
      // Round 2's judges read the deliverable the worker changed.
      const list = events(run.stdout);
      const workEnd = list.findIndex((e) => e.type === 'stage-end' && e.stage === 'rounds#2.work');
      const firstEval = list.findIndex((e) => e.type === 'stage-start' && String(e.stage).startsWith('rounds#2.evaluate['));
      expect(firstEval).toBeGreaterThan(workEnd);
    } finally {
      project.cleanup();
    }
  });

  it('refine - worker=human: the instructions are printed, the person publishes by running the commands they name, and the final round evaluates the edit', async () => {
    const project = exampleProject();
    try {
      const args = [
        'run',
        'refine',
        ...EXAMPLE_REFINE_PARAMS,
        '--json',
        '--param',
        'session=human',
        '--param',
        'max_rounds=1',
        '--param',
        'worker=human',
      ];
      const child = startCli(args, { cwd: project.root });
      let stdout = '';
      let stderr = '';
      let played = false;
      const human: Promise<number | null>[] = [];
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout?.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (played) return;
        const shown = events(stdout.slice(0, stdout.lastIndexOf('\n') + 1)).find(
          (e) => e.type === 'stage-log' && e.stage === 'rounds#2.work' && String(e.message).includes('On success run:'),
        );
        if (!shown) return;
        played = true;
        // The person: reads the printed instructions, edits the deliverable and runs the publish commands they give.
        const person = spawn(process.execPath, [WORKER], { cwd: project.root, stdio: ['pipe', 'ignore', 'inherit'] });
        person.stdin.end(String(shown.message));
        human.push(new Promise((resolve) => person.on('close', resolve)));
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(played, stdout.slice(-2000)).toBe(true);
      expect(await human[0]).toBe(0);
      expectOneHandoverAndFinalRound(project, { code, signal: null, stdout, stderr }, 'human', 'human');
      const shown = events(stdout).find((e) => e.type === 'stage-log' && String(e.message).includes('[human agent]'));
      expect(String(shown?.message)).toContain('round_001/next_tasks.json');
    } finally {
      project.cleanup();
    }
  });

  describe.skipIf(skipWithout(systemTool('tmux')))('tmux', () => {
    it('refine - worker=tmux:SESSION: the job is pasted into a live tmux session whose agent edits the deliverable and reports back', async () => {
      const project = exampleProject();
      // A tmux server of this test's own (its socket under TMUX_TMPDIR), shared by the test and refinery;
      // TMUX emptied so that a test run from inside tmux never reaches (or kills) the user's own server.
      const sockets = mkdtempSync(path.join(tmpdir(), 'refinery-tmux-'));
      const env = { TMUX_TMPDIR: sockets, TMUX: '' };
      try {
        execFileSync(
          'tmux',
          [
            'new-session',
            '-d',
            '-s',
            'refine-worker',
            '-x',
            '200',
            '-y',
            '50',
            '-c',
            project.root,
            'env',
            'WORKER_INPUT=tmux-lines',
            process.execPath,
            WORKER,
          ],
          {
            cwd: project.root,
            env: { ...process.env, ...env },
          },
        );
        const args = [
          'run',
          'refine',
          ...EXAMPLE_REFINE_PARAMS,
          '--json',
          '--param',
          'session=tmux',
          '--param',
          'max_rounds=1',
          '--param',
          'worker=tmux:refine-worker',
        ];
        const run = await runCli(args, { cwd: project.root, env });
        expectOneHandoverAndFinalRound(project, run, 'tmux', 'claude-code');
      } finally {
        try {
          execFileSync('tmux', ['kill-server'], { env: { ...process.env, ...env }, stdio: 'ignore' });
        } catch {
          // the server may already be gone
        }
        rmSync(sockets, { recursive: true, force: true });
        project.cleanup();
      }
    });
  });
});
