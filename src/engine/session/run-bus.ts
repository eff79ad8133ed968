// A run's event bus: its events.jsonl first, then the caller's sinks, then JUnit XML when asked.
import { EventBus, newRunId } from '../events/bus.ts';
import { jsonlSink } from '../events/jsonl-sink.ts';
import { junitSink } from '../events/junit-sink.ts';
import { UNCHANGED_BY_STAT } from '../state/run-manifest.ts';
import type { WriteProblem } from '../state/write-problem.ts';
import type { StageStatus } from '../types/events.ts';
import type { RunRequest } from './types.ts';

export interface RunBus {
  bus: EventBus;
  /** Ends the sinks that write files; what they could not write. */
  close(): WriteProblem[];
}

export function openRunBus(request: RunRequest, runId: string, pipeline: string): RunBus {
  const bus = new EventBus(runId, pipeline);
  const jsonl = jsonlSink(request.root, runId, request.warn);
  bus.subscribe(jsonl.sink);
  for (const sink of request.sinks) bus.subscribe(sink);
  const junit = request.junitFile ? junitSink(request.junitFile) : undefined;
  if (junit) bus.subscribe(junit.sink);
  return { bus, close: () => [jsonl.close(), junit?.problem()].filter((p) => p !== undefined) };
}

/** Nothing the last run looked at changed: every stage is reported up to date, as a run's events. */
export function reportUpToDate(
  request: RunRequest,
  unchanged: { pipeline: string; stages: string[]; skipped: ReadonlyMap<string, string> },
): { counts: Record<StageStatus, number>; writeProblems: WriteProblem[] } {
  const started = Date.now();
  const { bus, close } = openRunBus(request, newRunId(), unchanged.pipeline);
  bus.emit({ type: 'run-start', stages: unchanged.stages.length, params: {}, concurrency: request.concurrency });
  // One event per stage only where someone reads them stage by stage: a no-op of 10,000
  // stages would spend more time on events than on checking.
  if (request.stageByStage) {
    for (const stage of unchanged.stages) {
      const skip = unchanged.skipped.get(stage);
      bus.emit({
        type: 'stage-end',
        stage,
        status: skip === undefined ? 'fresh' : 'skipped',
        code: skip === undefined ? 'up-to-date' : 'when-false',
        durationMs: 0,
        attempts: 0,
        reason: skip ?? UNCHANGED_BY_STAT,
      });
    }
  }
  const skipped = unchanged.stages.filter((s) => unchanged.skipped.has(s)).length;
  const counts = { succeeded: 0, failed: 0, fresh: unchanged.stages.length - skipped, skipped, blocked: 0, aborted: 0 };
  bus.emit({ type: 'run-end', status: 'succeeded', durationMs: Date.now() - started, counts });
  return { counts, writeProblems: close() };
}
