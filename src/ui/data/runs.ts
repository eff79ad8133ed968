// Run history from `.refinery/runs/<run-id>/`: summary.json for finished runs, the first line of
// events.jsonl for the others (a live run, or one killed before its end). A finished run never
// changes, so its row and its stage table are cached.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ArtifactIssue, RunEvent, StageStatus } from '../../engine/types/events.ts';
import { runIdPid } from '../../engine/events/bus.ts';
import { pidExists } from '../../engine/state/process-identity.ts';
import { firstJsonLine, forEachJsonLine, isObject } from './jsonl.ts';

export type RunOutcome = 'succeeded' | 'failed' | 'aborted' | 'running' | 'interrupted';

export interface RunRow {
  runId: string;
  pipeline: string;
  status: RunOutcome;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  counts: Partial<Record<StageStatus, number>> | null;
  stages: number | null;
}

export type RunStageStatus = StageStatus | 'running';

export interface RunStage {
  id: string;
  status: RunStageStatus;
  startedAt: string | null;
  endedAt: string | null;
  durationMs: number | null;
  attempts: number;
  /** Why it started (stage-start), or why it failed / was skipped (stage-end). */
  startReason?: string;
  reason?: string;
  summary?: string;
  outputs?: Record<string, string>;
  issues?: ArtifactIssue[];
  rejectedDir?: string;
  progress?: number;
}

export interface RunDetail {
  row: RunRow;
  params: Record<string, unknown>;
  stages: RunStage[];
  loops: Array<{ loop: string; iteration: number; decision: string; time: string }>;
}

const RUN_ID = /^\d{8}T\d{9}Z-[0-9a-z]{1,20}$/;

export function isRunId(value: string): boolean {
  return RUN_ID.test(value);
}

export function runsDir(root: string): string {
  return path.join(root, '.refinery', 'runs');
}

const FAILURE_ORDER: Record<RunStageStatus, number> = { failed: 0, blocked: 1, aborted: 2, running: 3, skipped: 4, succeeded: 5, fresh: 6 };

export class RunStore {
  private readonly rows = new Map<string, RunRow>();
  private readonly details = new Map<string, RunDetail>();

  constructor(private readonly root: string) {}

  /** Run ids, newest first. */
  ids(): string[] {
    let names: string[];
    try {
      names = readdirSync(runsDir(this.root));
    } catch {
      return [];
    }
    return names.filter(isRunId).sort().reverse();
  }

  row(runId: string): RunRow | undefined {
    const cached = this.rows.get(runId);
    if (cached) return cached;
    const dir = path.join(runsDir(this.root), runId);
    const summary = readJson(path.join(dir, 'summary.json'));
    const start = firstJsonLine(path.join(dir, 'events.jsonl'));
    const started = isObject(start) && start.type === 'run-start' ? start : undefined;
    if (isObject(summary) && typeof summary.pipeline === 'string') {
      const finishedAt = typeof summary.finishedAt === 'string' ? summary.finishedAt : null;
      const durationMs = typeof summary.durationMs === 'number' ? summary.durationMs : null;
      const status =
        summary.status === 'succeeded' || summary.status === 'failed' || summary.status === 'aborted' ? summary.status : 'failed';
      const startedAt =
        typeof started?.time === 'string'
          ? started.time
          : finishedAt && durationMs !== null
            ? new Date(Date.parse(finishedAt) - durationMs).toISOString()
            : null;
      const row: RunRow = {
        runId,
        pipeline: summary.pipeline,
        status,
        startedAt,
        finishedAt,
        durationMs,
        counts: isObject(summary.counts) ? (summary.counts as RunRow['counts']) : null,
        stages: typeof started?.stages === 'number' ? started.stages : null,
      };
      this.rows.set(runId, row);
      return row;
    }
    if (!started || typeof started.pipeline !== 'string') return undefined;
    const pid = runIdPid(runId);
    const alive = pid !== undefined && pid !== process.pid ? pidExists(pid) : pid === process.pid;
    return {
      runId,
      pipeline: started.pipeline,
      status: alive ? 'running' : 'interrupted',
      startedAt: typeof started.time === 'string' ? started.time : null,
      finishedAt: null,
      durationMs: typeof started.time === 'string' ? Date.now() - Date.parse(started.time) : null,
      counts: null,
      stages: typeof started.stages === 'number' ? started.stages : null,
    };
  }

  list(filter: { pipeline?: string; status?: string; offset: number; limit: number }): { total: number; rows: RunRow[] } {
    const rows = this.ids()
      .map((id) => this.row(id))
      .filter((r): r is RunRow => r !== undefined);
    const kept = rows.filter((r) => (!filter.pipeline || r.pipeline === filter.pipeline) && (!filter.status || r.status === filter.status));
    return { total: kept.length, rows: kept.slice(filter.offset, filter.offset + filter.limit) };
  }

  /** The params a run started with (its run-start event). */
  startParams(runId: string): Record<string, unknown> | undefined {
    const start = firstJsonLine(path.join(runsDir(this.root), runId, 'events.jsonl'));
    return isObject(start) && start.type === 'run-start' && isObject(start.params) ? start.params : undefined;
  }

  /** The newest run of a pipeline (any outcome). */
  latest(pipeline: string): RunRow | undefined {
    for (const id of this.ids()) {
      const row = this.row(id);
      if (row?.pipeline === pipeline) return row;
    }
    return undefined;
  }

  async detail(runId: string): Promise<RunDetail | undefined> {
    const cached = this.details.get(runId);
    if (cached) return cached;
    const row = this.row(runId);
    if (!row) return undefined;
    const stages = new Map<string, RunStage>();
    const loops: RunDetail['loops'] = [];
    let params: Record<string, unknown> = {};
    const stage = (id: string): RunStage => {
      let s = stages.get(id);
      if (!s) {
        s = { id, status: 'running', startedAt: null, endedAt: null, durationMs: null, attempts: 0 };
        stages.set(id, s);
      }
      return s;
    };
    await forEachJsonLine(path.join(runsDir(this.root), runId, 'events.jsonl'), (value) => {
      if (!isObject(value)) return;
      const e = value as unknown as RunEvent;
      switch (e.type) {
        case 'run-start':
          params = isObject(e.params) ? e.params : {};
          break;
        case 'stage-start': {
          const s = stage(e.stage);
          s.status = 'running';
          s.startedAt ??= e.time;
          s.attempts = Math.max(s.attempts, e.attempt);
          s.startReason = e.reason;
          break;
        }
        case 'stage-progress':
          stage(e.stage).progress = e.fraction;
          break;
        case 'stage-end': {
          const s = stage(e.stage);
          s.status = e.status;
          s.endedAt = e.time;
          s.durationMs = e.durationMs;
          s.attempts = Math.max(s.attempts, e.attempts);
          s.startedAt ??= new Date(Date.parse(e.time) - e.durationMs).toISOString();
          for (const key of ['reason', 'summary', 'outputs', 'issues', 'rejectedDir'] as const)
            if (e[key] !== undefined) (s as unknown as Record<string, unknown>)[key] = e[key];
          break;
        }
        case 'loop-iteration':
          loops.push({ loop: e.loop, iteration: e.iteration, decision: e.decision, time: e.time });
          break;
      }
    });
    const finished = row.status !== 'running';
    // A run that ended without a stage's end (killed): the stage did not finish.
    if (finished) for (const s of stages.values()) if (s.status === 'running') s.status = 'aborted';
    const sorted = [...stages.values()].sort(
      (a, b) =>
        FAILURE_ORDER[a.status] - FAILURE_ORDER[b.status] ||
        (a.startedAt ?? '').localeCompare(b.startedAt ?? '') ||
        a.id.localeCompare(b.id),
    );
    const detail: RunDetail = { row, params, stages: sorted, loops };
    if (row.status !== 'running' && row.status !== 'interrupted') {
      this.details.set(runId, detail);
      // A handful of big runs is plenty; the oldest cached goes first.
      if (this.details.size > 24) this.details.delete(this.details.keys().next().value as string);
    }
    return detail;
  }

  /** A stage's log lines in one run (the last `tail` of them). */
  async logs(
    runId: string,
    stageId: string,
    tail: number,
  ): Promise<{ lines: Array<{ time: string; stream: string; message: string }>; total: number }> {
    const lines: Array<{ time: string; stream: string; message: string }> = [];
    let total = 0;
    await forEachJsonLine(path.join(runsDir(this.root), runId, 'events.jsonl'), (value) => {
      if (!isObject(value) || value.type !== 'stage-log' || value.stage !== stageId) return;
      total += 1;
      lines.push({ time: String(value.time), stream: String(value.stream), message: String(value.message) });
      if (lines.length > tail) lines.shift();
    });
    return { lines, total };
  }

  /** Forget what a live run may have changed (its row is recomputed on the next ask). */
  invalidate(runId: string): void {
    const row = this.rows.get(runId);
    if (row && row.status !== 'running') return;
    this.rows.delete(runId);
    this.details.delete(runId);
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}
