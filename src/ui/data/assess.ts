// Which stages are stale, and why: the very answer of `refinery plan --json` (and `refinery why`),
// got by running it in a child process. Hashing a 10,000-stage pipeline's inputs takes a while;
// off the server's event loop the pages stay responsive meanwhile, and the answer cannot drift from
// the CLI's. Cached per pipeline for a few seconds and dropped when one of its runs ends.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../engine/paths/package-root.ts';

export interface AssessEntry {
  id: string;
  decision: 'run' | 'maybe' | 'fresh' | 'skip' | 'fail' | 'loop';
  reasons: string[];
  needs: string[];
}

export interface Assessment {
  at: number;
  entries: Map<string, AssessEntry>;
}

export type AssessOutcome = { ok: true; assessment: Assessment } | { ok: false; error: string };

const TIMEOUT_MS = 120_000;
const CLI = path.join(PACKAGE_ROOT, 'bin', 'refinery.js');

export class PlanAssessor {
  private readonly done = new Map<string, Assessment>();
  private readonly pending = new Map<string, Promise<AssessOutcome>>();
  private readonly generation = new Map<string, number>();

  constructor(
    private readonly root: string,
    /** The pipeline file and the `key=value` params the dashboard shows it with. */
    private readonly target: (pipeline: string) => { file: string; params: string[] } | undefined,
  ) {}

  cached(pipeline: string): Assessment | undefined {
    return this.done.get(pipeline);
  }

  invalidate(pipeline: string): void {
    this.done.delete(pipeline);
    this.generation.set(pipeline, (this.generation.get(pipeline) ?? 0) + 1);
  }

  /** The cached answer when younger than maxAgeMs, else a fresh one (one child at a time per pipeline). */
  request(pipeline: string, maxAgeMs: number): Promise<AssessOutcome> {
    const cached = this.done.get(pipeline);
    if (cached && Date.now() - cached.at <= maxAgeMs) return Promise.resolve({ ok: true, assessment: cached });
    const running = this.pending.get(pipeline);
    if (running) return running;
    const target = this.target(pipeline);
    if (!target) return Promise.resolve({ ok: false, error: `no pipeline '${pipeline}'` });
    const generation = this.generation.get(pipeline) ?? 0;
    const promise = this.run(target).then((outcome) => {
      this.pending.delete(pipeline);
      if (outcome.ok && (this.generation.get(pipeline) ?? 0) === generation) this.done.set(pipeline, outcome.assessment);
      return outcome;
    });
    this.pending.set(pipeline, promise);
    return promise;
  }

  private run(target: { file: string; params: string[] }): Promise<AssessOutcome> {
    return new Promise((resolve) => {
      const args = [CLI, '-C', this.root, 'plan', target.file, '--json', ...target.params.flatMap((p) => ['-p', p])];
      const child = spawn(process.execPath, args, {
        cwd: this.root,
        env: { ...process.env, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => {
        if (err.length < 8192) err += d.toString();
      });
      const timer = setTimeout(() => child.kill('SIGTERM'), TIMEOUT_MS);
      child.on('error', (error) => {
        clearTimeout(timer);
        resolve({ ok: false, error: error.message });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code !== 0) return resolve({ ok: false, error: err.trim() || `refinery plan exited with ${code}` });
        try {
          const list = JSON.parse(Buffer.concat(out).toString('utf8')) as AssessEntry[];
          resolve({ ok: true, assessment: { at: Date.now(), entries: new Map(list.map((e) => [e.id, e])) } });
        } catch (error) {
          resolve({ ok: false, error: `refinery plan --json printed something else: ${(error as Error).message}` });
        }
      });
    });
  }
}
