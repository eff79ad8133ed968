import type { FileHashes } from '../engine/state/file-hashes.ts';
import type { StageState } from '../engine/state/stage-state.ts';
import type { RecordVouch } from '../engine/state/run-manifest.ts';
import type { RunnerPool } from '../engine/shell/runner-pool.ts';
import type { EventSink } from '../engine/events/bus.ts';
import type { RecordUpdate } from '../engine/watch/record-trust.ts';

/** Where a command writes; only the CLI layer touches the real console. */
export interface CommandIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly cwd: string;
  /** Where the command was typed, for relative paths in its arguments (default: this process's cwd). */
  readonly workdir?: string;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on the first SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** Aborted on the second SIGINT/SIGTERM (a third exits at once with 130). */
  readonly forceSignal: AbortSignal;
  /** Set when a running `refinery watch` runs this command for a client (see src/cli/daemon/). */
  readonly daemon?: DaemonServices;
}

/** What a watch daemon lends a command it runs for a client. */
export interface DaemonServices {
  /** The watch's own stage journal of a pipeline it watches: one writer per journal. */
  stageState(pipeline: string): StageState | undefined;
  /** The watch's content-hash cache. */
  readonly hashes: FileHashes;
  /** The watch's own event sinks (its MQTT topics, its dashboard): a run it answers is seen there too. */
  readonly sinks: readonly EventSink[];
  /** The watch's command runners, warm already. */
  readonly runners: RunnerPool | undefined;
  /** The watch holds the project lock, and runs nothing else while this command runs. */
  readonly holdsLock: true;
  /** Taken after every change made before the request was seen, before the command looked at anything. */
  readonly epoch: number;
  /** For a no-op record: the record and the few paths that may have changed since it held (undefined: stat them all). */
  vouch(recordFile: string): RecordVouch | undefined;
  /** The record matched the disk at `epoch`: this command found nothing changed, or wrote it anew after looking at `observed`. */
  recordHolds(recordFile: string, epoch: number, update: RecordUpdate): void;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Returns the process exit code. */
  run(argv: string[], io: CommandIo): Promise<number>;
}
