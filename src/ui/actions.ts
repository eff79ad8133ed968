// What the dashboard may do when started with --allow-actions: run a pipeline (or one stage, or
// with --force) as `refinery run` in a child process, and abort a run it started. The child takes
// the project lock as any run does, so a watch or another run in the project refuses it cleanly.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { runIdPid } from '../engine/events/bus.ts';
import { PACKAGE_ROOT } from '../engine/paths/package-root.ts';

export type ActionOutcome = { ok: true; message: string } | { ok: false; status: number; error: string };

export interface ActionRunner {
  run(pipeline: string, options: { stage?: string; force: boolean }): Promise<ActionOutcome>;
  abort(runId: string): ActionOutcome;
}

const CLI = path.join(PACKAGE_ROOT, 'bin', 'refinery.js');
/** A run refused at once (the project is locked, a bad stage name) exits within this. */
const EARLY_EXIT_MS = 1500;

export class ChildRunActions implements ActionRunner {
  private readonly children = new Map<number, ChildProcess>();

  constructor(
    private readonly root: string,
    private readonly target: (pipeline: string) => { file: string; params: string[] } | undefined,
  ) {}

  run(pipeline: string, options: { stage?: string; force: boolean }): Promise<ActionOutcome> {
    const target = this.target(pipeline);
    if (!target) return Promise.resolve({ ok: false, status: 404, error: `no pipeline '${pipeline}'` });
    const args = [
      CLI,
      '-C',
      this.root,
      'run',
      target.file,
      ...target.params.flatMap((p) => ['-p', p]),
      ...(options.stage ? ['--only', options.stage] : []),
      ...(options.force ? ['--force'] : []),
    ];
    const child = spawn(process.execPath, args, {
      cwd: this.root,
      env: { ...process.env, NO_COLOR: '1', CI: 'true' },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 16_384) stderr += d.toString();
    });
    const pid = child.pid;
    if (pid !== undefined) this.children.set(pid, child);
    return new Promise((resolve) => {
      const timer = setTimeout(
        () =>
          resolve({
            ok: true,
            message: `started refinery run ${pipeline}${options.stage ? ` --only ${options.stage}` : ''}${options.force ? ' --force' : ''} (pid ${pid})`,
          }),
        EARLY_EXIT_MS,
      );
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ ok: false, status: 500, error: error.message });
      });
      child.on('close', (code) => {
        if (pid !== undefined) this.children.delete(pid);
        clearTimeout(timer);
        // After the timer fired the answer is already given; a late exit is the run's own business.
        resolve(
          code === 0
            ? { ok: true, message: 'the run finished' }
            : { ok: false, status: 409, error: stderr.trim() || `refinery run exited with ${code}` },
        );
      });
    });
  }

  abort(runId: string): ActionOutcome {
    const pid = runIdPid(runId);
    const child = pid === undefined ? undefined : this.children.get(pid);
    if (!child || pid === undefined)
      return { ok: false, status: 409, error: `run ${runId} was not started from this dashboard; stop it where it runs (Ctrl-C)` };
    // Its own process group: the CLI aborts its stages and their commands' groups on SIGINT.
    process.kill(-pid, 'SIGINT');
    return { ok: true, message: `asked run ${runId} to stop` };
  }

  /** Stops every run this dashboard started (when it shuts down). */
  stopAll(): void {
    for (const pid of this.children.keys()) {
      try {
        process.kill(-pid, 'SIGINT');
      } catch {
        /* already gone */
      }
    }
  }
}
