import type { StageInstance } from '../types/plan.ts';
// What a caller gives a run session and what it gets back. The session decides what runs; the
// caller (the CLI, a watch answering a client) owns the console, exit codes and signals.
import type { EventSink } from '../events/bus.ts';
import type { Shard } from '../executor/shard.ts';
import type { RemoteSlots } from '../executor/remote-slots.ts';
import type { StageCache } from '../remote-cache/stage-cache.ts';
import type { RemoteCache } from '../remote-cache/remote-cache.ts';
import type { RunnerPool } from '../shell/runner-pool.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { LockResult } from '../state/project-lock.ts';
import type { RecordUpdate, RecordVouch } from '../state/run-manifest.ts';
import type { StateWarn } from '../state/set-aside.ts';
import type { StageState } from '../state/stage-state.ts';
import type { WriteProblem } from '../state/write-problem.ts';
import type { RunStatus, StageStatus } from '../types/events.ts';
import type { Diagnostic } from '../types/source.ts';
import type { LoadPhase } from './open-pipeline.ts';

/** What a running watch lends a session it runs for a client: its state, caches and runners, and its word on the no-op record. */
export interface SessionServices {
  /** The watch's own stage journal of a pipeline it watches: one writer per journal. */
  stageState(pipeline: string): StageState | undefined;
  /** The watch's content-hash cache. */
  readonly hashes: FileHashes;
  /** The watch's command runners, warm already. */
  readonly runners: RunnerPool | undefined;
  /** The watch holds the project lock, and runs nothing else while this session runs. */
  readonly holdsLock: true;
  /** Taken after every change made before the request was seen, before the session looked at anything. */
  readonly epoch: number;
  /** For a no-op record: the record and the few paths that may have changed since it held (undefined: stat them all). */
  vouch(recordFile: string): RecordVouch | undefined;
  /** The record matched the disk at `epoch`: the session found nothing changed, or wrote it anew after looking at `observed`. */
  recordHolds(recordFile: string, epoch: number, update: RecordUpdate): void;
}

/** The remote cache as the caller asked for it; the session reads the environment and refinery.config.yaml for the rest. */
export interface RemoteRequest {
  flagUrl?: string;
  readOnly: boolean;
  off: boolean;
  /** Called with the run's open cache (model answers are stored there too, by a layer above); returns how to detach. */
  attach?(cache: RemoteCache, runId: string): Promise<() => void>;
}

export interface RunRequest {
  root: string;
  /** The pipeline file, absolute (findPipelineFile). */
  pipelineFile: string;
  /** `--param` overrides, as given. */
  params: Readonly<Record<string, string>>;
  env: NodeJS.ProcessEnv;
  concurrency: number;
  force: boolean;
  keepGoing: boolean;
  /** Stage or instance ids to run, with what they need; all when empty. */
  only: readonly string[];
  shard?: Shard;
  budgetUsd?: number;
  /** Someone reads the events stage by stage (--json, --verbose, --junit): every stage gets its stage-end. */
  stageByStage: boolean;
  /** Write the run as JUnit XML here (absolute). */
  junitFile?: string;
  remote: RemoteRequest;
  /** Aborts the run's stages. */
  signal: AbortSignal;
  /** The caller's event sinks (its console view, a watch's MQTT topics and dashboard); the run's events.jsonl is always written. */
  sinks: readonly EventSink[];
  /** Told of damaged state files set aside; the session goes on. */
  warn: StateWarn;
  /** Told what the session found before the run's events begin. */
  notify(notice: SessionNotice): void;
  /** Set when a running watch answers this session for a client. */
  services?: SessionServices;
  /** Workers on other machines (`--workers`): the caller connects them once the run has its remote cache. */
  workers?: WorkersRequest;
  /** Variables for every process a stage starts (a trace's TRACEPARENT for the stage's span). */
  stageEnv?: (inst: StageInstance) => Readonly<Record<string, string>>;
}

/** How a session reaches workers: they need a remote cache it may write, then the caller connects them. */
export interface WorkersRequest {
  open(run: { runId: string; stages: StageCache; force: boolean }): Promise<{ slots: RemoteSlots; close(): Promise<void> } | undefined>;
}

/** What a session tells its caller besides the run's events. */
export type SessionNotice =
  /** The up-to-date check against the last run's record: files it read, how many a watch vouched for, how many changed. */
  | { kind: 'checked'; files: number; vouched: number; changed: number; changedFolders: number }
  | { kind: 'remote-cache-warning'; message: string }
  /** Stages no share of `--shard` runs: they need stages of several shares. */
  | { kind: 'shard-leftover'; stages: string[] };

/** One result per run, with a typed outcome: the caller maps it to what it shows and its exit code. */
export type RunOutcome =
  /** Nothing the last run looked at changed: every stage was reported up to date without loading the pipeline. */
  | { code: 'up-to-date'; counts: Record<StageStatus, number>; writeProblems: WriteProblem[] }
  /** The run went through the executor. */
  | { code: 'ran'; status: RunStatus; counts: Record<StageStatus, number>; diagnostics: Diagnostic[]; writeProblems: WriteProblem[] }
  /** Nothing ran: the pipeline file, its params or its expansion has errors. */
  | { code: 'pipeline-invalid'; phase: LoadPhase; file: string; source: string; diagnostics: Diagnostic[] }
  | { code: 'remote-cache-invalid'; message: string }
  /** `--workers` without a remote cache this machine may write (inputs and results travel through it). */
  | { code: 'workers-need-cache'; readOnly: boolean }
  /** The workers could not be reached (the caller has said why). */
  | { code: 'workers-unavailable' }
  /** `--only` names no stage of the plan. */
  | { code: 'unknown-only'; message: string }
  /** A backend or tool the tasks need is missing: nothing ran (or was paid for). */
  | { code: 'preflight-failed'; diagnostics: Diagnostic[] }
  /** Another refinery holds the project. */
  | { code: 'locked'; lock: Exclude<LockResult, { ok: true }> }
  /** The state folder cannot be written. */
  | { code: 'state-unwritable'; writeProblems: WriteProblem[] };
