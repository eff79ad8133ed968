// The session's last phase: after a run that succeeded, the plan record and the no-op record,
// so the next run (or a watch asked by a client) can find everything up to date from stats.
// `refinery run` and the watch's own runs record through here.
import { writePlanRecord } from '../pipeline/plan-record.ts';
import type { NoopRecord } from '../state/noop-record.ts';
import { buildNoopRecord, type PreviousRecord, writeNoopRecord } from '../state/run-manifest.ts';
import type { Observations } from '../state/observations.ts';
import type { StateWarn } from '../state/set-aside.ts';
import type { WriteProblem } from '../state/write-problem.ts';
import type { Plan } from '../types/plan.ts';

export interface RunRecording {
  /** The pipeline file, absolute. */
  pipelineFile: string;
  /** The no-op record's key (manifestKey). */
  key: string;
  plan: Plan;
  /** Every stage of the pipeline, in its order (a run of part of the plan names them all). */
  stages: readonly string[];
  /** What the run looked at, with the stats taken when it read each. */
  observations: Observations;
  /** The stages reported skipped, with why. */
  skipped: ReadonlyMap<string, string>;
  /** The last record, for what this run did not look at again. */
  previous?: PreviousRecord;
  /** Write the plan record too (not when the plan on disk is this one already). */
  writePlan: boolean;
  /** Files the record leaves out, trusted by their folders' listings (final-inputs.ts). */
  leaveOut?: (rel: string) => boolean;
  warn?: StateWarn;
}

/**
 * Writes the plan record, then the no-op record it belongs to (none without its plan). Nothing
 * is written for a pipeline with loops: their instances appear while running.
 */
export function recordRun(root: string, recording: RunRecording): { problems: WriteProblem[]; record?: NoopRecord } {
  if (recording.plan.loops.length > 0) return { problems: [] };
  if (recording.writePlan) {
    const problem = writePlanRecord(root, recording.key, recording.plan);
    if (problem) return { problems: [problem] };
  }
  const { key, plan, stages, observations, skipped, previous, pipelineFile, warn, leaveOut } = recording;
  const record = buildNoopRecord(key, plan.pipeline.name, stages, observations, skipped, previous, leaveOut);
  const problem = writeNoopRecord(root, pipelineFile, record, warn);
  return problem ? { problems: [problem] } : { problems: [], record };
}
