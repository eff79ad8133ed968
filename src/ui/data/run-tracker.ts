// What the runs said last about each stage of each pipeline, kept up to date by the live events,
// so a page asked for while a run is going sees its running stages without re-reading the log. A
// watch runs only the stages a change touched: each stage keeps the outcome of the newest run that
// ran it, not just of the newest run.
import type { RunEvent } from '../../engine/types/events.ts';
import type { RunStageStatus } from './runs.ts';

export interface StageOutcome {
  status: RunStageStatus;
  runId: string;
  /** When the dashboard learned it (0: read from disk at start): newer than a plan verdict, it wins. */
  at: number;
}

interface TrackedPipeline {
  stages: Map<string, StageOutcome>;
  live: Set<string>;
  seeded: boolean;
}

export class RunTracker {
  private readonly pipelines = new Map<string, TrackedPipeline>();

  private entry(pipeline: string): TrackedPipeline {
    let p = this.pipelines.get(pipeline);
    if (!p) {
      p = { stages: new Map(), live: new Set(), seeded: false };
      this.pipelines.set(pipeline, p);
    }
    return p;
  }

  isSeeded(pipeline: string): boolean {
    return this.pipelines.get(pipeline)?.seeded ?? false;
  }

  /** Fills in what the newest run on disk said, under anything the live events already told. */
  seed(pipeline: string, runId: string, live: boolean, stages: ReadonlyMap<string, RunStageStatus>): void {
    const p = this.entry(pipeline);
    if (p.seeded) return;
    p.seeded = true;
    if (live) p.live.add(runId);
    for (const [id, status] of stages) if (!p.stages.has(id)) p.stages.set(id, { status, runId, at: 0 });
  }

  outcome(pipeline: string, stage: string): { status: RunStageStatus; live: boolean; at: number } | undefined {
    const p = this.pipelines.get(pipeline);
    const o = p?.stages.get(stage);
    return o && p ? { status: o.status, live: p.live.has(o.runId), at: o.at } : undefined;
  }

  /** Stage ids with an outcome (loop iterations among them). */
  stageIds(pipeline: string): string[] {
    return [...(this.pipelines.get(pipeline)?.stages.keys() ?? [])];
  }

  apply(event: RunEvent): void {
    const p = this.entry(event.pipeline);
    switch (event.type) {
      case 'run-start':
        p.live.add(event.runId);
        break;
      case 'stage-start':
        p.live.add(event.runId);
        p.stages.set(event.stage, { status: 'running', runId: event.runId, at: Date.now() });
        break;
      case 'stage-end':
        p.stages.set(event.stage, { status: event.status, runId: event.runId, at: Date.now() });
        break;
      case 'run-end':
        p.live.delete(event.runId);
        // A stage the run never ended was cut short with it.
        for (const [id, o] of p.stages)
          if (o.runId === event.runId && o.status === 'running') p.stages.set(id, { status: 'aborted', runId: o.runId, at: Date.now() });
        break;
    }
  }
}
