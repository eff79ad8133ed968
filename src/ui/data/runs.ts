// Run history from `.refinery/runs/<run-id>/`: summary.json for finished runs, the first line of
// events.jsonl for the others (a live run, or one killed before its end). A finished run never
// changes, so its row and its stage table are cached; a live run's journal is read incrementally
// (run-journal.ts), never again from its start.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { StageStatus } from '../../engine/types/events.ts';
import { runIdPid } from '../../engine/events/bus.ts';
import { pidExists } from '../../engine/state/process-identity.ts';
import { firstJsonLine, isObject } from './jsonl.ts';
import { RunJournal, type LogLine, type RunStage, type RunStageStatus } from './run-journal.ts';

export type { RunStage, RunStageStatus } from './run-journal.ts';

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

/** Journals kept folded: a 600,000-line one holds about 10 MB of line positions. */
const MAX_JOURNALS = 8;

const FAILURE_ORDER: Record<RunStageStatus, number> = { failed: 0, blocked: 1, aborted: 2, running: 3, skipped: 4, succeeded: 5, fresh: 6 };

export class RunStore {
  private readonly rows = new Map<string, RunRow>();
  private readonly details = new Map<string, RunDetail>();
  private readonly journals = new Map<string, RunJournal>();

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

  /** The fold of a run's journal, read incrementally; the few most recent are kept. */
  private journal(runId: string): RunJournal {
    let journal = this.journals.get(runId);
    if (journal) this.journals.delete(runId);
    else journal = new RunJournal(path.join(runsDir(this.root), runId, 'events.jsonl'));
    this.journals.set(runId, journal);
    if (this.journals.size > MAX_JOURNALS) this.journals.delete(this.journals.keys().next().value as string);
    return journal;
  }

  async detail(runId: string): Promise<RunDetail | undefined> {
    const cached = this.details.get(runId);
    if (cached) return cached;
    const row = this.row(runId);
    if (!row) return undefined;
    const journal = this.journal(runId);
    await journal.catchUp();
    const finished = row.status !== 'running';
    // Copies: the journal goes on folding a live run while this answer is being sent.
    const stages = [...journal.stages.values()].map((s) => ({
      ...s,
      // A run that ended without a stage's end (killed): the stage did not finish.
      status: finished && s.status === 'running' ? ('aborted' as const) : s.status,
    }));
    const sorted = stages.sort(
      (a, b) =>
        FAILURE_ORDER[a.status] - FAILURE_ORDER[b.status] ||
        (a.startedAt ?? '').localeCompare(b.startedAt ?? '') ||
        a.id.localeCompare(b.id),
    );
    const detail: RunDetail = { row, params: journal.params, stages: sorted, loops: [...journal.loops] };
    if (row.status !== 'running' && row.status !== 'interrupted') {
      this.details.set(runId, detail);
      // A handful of big runs is plenty; the oldest cached goes first.
      if (this.details.size > 24) this.details.delete(this.details.keys().next().value as string);
    }
    return detail;
  }

  /** A stage's log lines in one run (the last `tail` of them). */
  async logs(runId: string, stageId: string, tail: number): Promise<{ lines: LogLine[]; total: number }> {
    const journal = this.journal(runId);
    await journal.catchUp();
    return journal.logs(stageId, tail);
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
