/** Where a command writes; only the CLI layer touches the real console. */
export interface CommandIo {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Aborted on the first SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** Aborted on the second SIGINT/SIGTERM (a third exits at once with 130). */
  readonly forceSignal: AbortSignal;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Returns the process exit code. */
  run(argv: string[], io: CommandIo): Promise<number>;
}
