import type { EventSink } from '../engine/events/bus.ts';
import type { SessionServices } from '../engine/session/types.ts';

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

/** What a watch daemon lends a command it runs for a client: what it lends a run session, and its event sinks. */
export interface DaemonServices extends SessionServices {
  /** The watch's own event sinks (its MQTT topics, its dashboard): a run it answers is seen there too. */
  readonly sinks: readonly EventSink[];
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Returns the process exit code. */
  run(argv: string[], io: CommandIo): Promise<number>;
}
