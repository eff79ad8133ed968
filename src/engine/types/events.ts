import type { TaskReport } from '../../task/define-task.ts';

export type StageStatus = 'succeeded' | 'failed' | 'fresh' | 'skipped' | 'blocked' | 'aborted';
export type RunStatus = 'succeeded' | 'failed' | 'aborted';

interface EventBase {
  runId: string;
  pipeline: string;
  /** ISO 8601 time the event happened. */
  time: string;
}

export interface RunStartEvent extends EventBase {
  type: 'run-start';
  stages: number;
  params: Record<string, unknown>;
  concurrency: number;
}

export interface StageStartEvent extends EventBase {
  type: 'stage-start';
  stage: string;
  attempt: number;
  /** Why it runs, e.g. "input src/a.txt changed". */
  reason: string;
  /** The `refinery worker` that took it (`refinery run --workers`); absent where it runs here. */
  worker?: string;
}

export interface StageProgressEvent extends EventBase {
  type: 'stage-progress';
  stage: string;
  fraction: number;
  message?: string;
}

export interface StageLogEvent extends EventBase {
  type: 'stage-log';
  stage: string;
  stream: 'log' | 'stdout' | 'stderr';
  message: string;
}

export interface StageReportEvent extends EventBase {
  type: 'stage-report';
  stage: string;
  report: TaskReport;
}

export interface ArtifactIssue {
  output: string;
  path: string;
  pointer: string;
  message: string;
}

/**
 * Why a stage ended as it did, for programs to match (`reason` says it for people). By status:
 * succeeded `ran`; fresh `up-to-date`; skipped `when-false`; blocked `upstream-failed`,
 * `upstream-not-run` or `stopped-after-failure`; aborted `interrupted`; failed any other.
 */
export type StageOutcomeCode =
  | 'ran'
  | 'from-remote-cache'
  | 'up-to-date'
  | 'when-false'
  | 'upstream-failed'
  | 'upstream-not-run'
  | 'stopped-after-failure'
  | 'interrupted'
  | 'command-failed'
  | 'task-threw'
  | 'unknown-task'
  | 'task-load-failed'
  | 'invalid-params'
  | 'invalid-artifact'
  | 'publish-failed'
  | 'timed-out'
  | 'output-outside-project'
  | 'output-path-blocked'
  | 'missing-input'
  | 'unreadable-input'
  | 'expression-failed'
  | 'state-write-failed'
  | 'file-system-error'
  | 'internal-error'
  | 'no-worker'
  | 'worker-refused'
  | 'worker-result-refused';

export interface StageEndEvent extends EventBase {
  type: 'stage-end';
  stage: string;
  status: StageStatus;
  /** Why, as a code; `reason` says it in words. */
  code: StageOutcomeCode;
  durationMs: number;
  attempts: number;
  /** For failed/blocked/skipped: the reason in one line. */
  reason?: string;
  summary?: string;
  /** Output name -> final path, for succeeded stages. */
  outputs?: Record<string, string>;
  /** Schema problems of a rejected artifact. */
  issues?: ArtifactIssue[];
  /** Where a rejected artifact was moved. */
  rejectedDir?: string;
  /** Set when the outputs came from the remote cache instead of running: what running took and cost where it ran. */
  remote?: RemoteHit;
  /** The `refinery worker` that ran it (`refinery run --workers`); absent where it ran here. */
  worker?: string;
}

/** What a stage restored from the remote cache saved. */
export interface RemoteHit {
  savedMs: number;
  savedUsd: number;
}

/** What the remote cache did in a run. */
export interface RemoteCacheSummary {
  /** The cache's URL (without credentials). */
  url: string;
  readOnly: boolean;
  /** Stages whose outputs came from the cache instead of running. */
  stages: number;
  /** Model calls not made: answers from the cache, and the calls of the stages it served. */
  calls: number;
  /** What those stages and calls took and cost where they ran. */
  savedMs: number;
  savedUsd: number;
  /** Entries (stage results and answers) this run stored. */
  uploaded: number;
  /** Entries refused: a digest, path, schema or signature that does not hold. */
  refused: number;
  /** Warnings: requests that failed, uploads the server refused. */
  problems: number;
}

export interface LoopEvent extends EventBase {
  type: 'loop-iteration';
  loop: string;
  iteration: number;
  decision: 'continue' | 'done' | 'max-reached';
}

export interface RunEndEvent extends EventBase {
  type: 'run-end';
  status: RunStatus;
  durationMs: number;
  counts: Record<StageStatus, number>;
  /** Present when the run used a remote cache. */
  remote?: RemoteCacheSummary;
}

export type RunEvent =
  | RunStartEvent
  | StageStartEvent
  | StageProgressEvent
  | StageLogEvent
  | StageReportEvent
  | StageEndEvent
  | LoopEvent
  | RunEndEvent;

/** An event without the fields the bus fills in. */
export type RunEventInput = RunEvent extends infer E ? (E extends RunEvent ? Omit<E, 'runId' | 'pipeline' | 'time'> : never) : never;
