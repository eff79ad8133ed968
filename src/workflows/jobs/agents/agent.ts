/** How refinery hands instructions to an agent. Types only. */

export interface AgentLaunch {
  jobId: string;
  role: 'worker' | 'reviewer';
  iteration: number;
  instructions: string;
  /** The instructions as a file (for agents that should read a file rather than a long paste). */
  instructionsFile: string;
  workdir: string;
  /** The whole environment of agent processes (the command's env plus job id, registry dir, broker credentials). */
  env: NodeJS.ProcessEnv;
  /** Where a process agent's stdout/stderr go. */
  outputFile: string;
}

export interface AgentExit {
  code: number | null;
  signal: string | null;
}

export interface AgentHandle {
  /** True when refinery started a process it waits for and may stop (command agents). */
  ownsProcess: boolean;
  /** Resolves when the agent process ends; never resolves for agents refinery does not own (tmux, human). */
  exited: Promise<AgentExit>;
  /** Ends the agent process (TERM, then KILL), if refinery owns one. */
  stop(): Promise<void>;
}

export interface Agent {
  kind: string;
  /** One line for logs: never a secret. */
  describe(): string;
  start(launch: AgentLaunch): Promise<AgentHandle>;
}

export class AgentStartError extends Error {}
