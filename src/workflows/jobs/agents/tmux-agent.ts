import { execFile } from 'node:child_process';
import { AgentStartError, type Agent, type AgentExit, type AgentHandle, type AgentLaunch } from './agent.ts';

/**
 * Pastes into a live tmux session, as the seed does (set-buffer, paste-buffer, Enter). The pasted text
 * is short: the job id and the instructions file, since TUIs may swallow long pastes.
 */
export class TmuxAgent implements Agent {
  readonly kind = 'tmux';

  constructor(
    private readonly session: string,
    private readonly serverName?: string,
    private readonly enterDelayMs = 500,
  ) {
    if (!/^[A-Za-z0-9_.:@-]+$/.test(session)) {
      throw new AgentStartError(`tmux session '${session}' is not a valid target name (letters, digits, _ . : @ -)`);
    }
  }

  describe(): string {
    return `tmux session ${this.session}`;
  }

  async start(launch: AgentLaunch): Promise<AgentHandle> {
    try {
      await this.tmux(['has-session', '-t', this.session]);
    } catch (error) {
      throw new AgentStartError(
        (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'the tmux agent needs tmux, which is not installed'
          : `tmux session '${this.session}' does not exist; start the agent session first (tmux new-session -d -s ${this.session} ...)`,
      );
    }
    const buffer = `job_buf_${launch.jobId}`;
    const text = `Job ${launch.jobId}: your job_id is "${launch.jobId}". Read ${launch.instructionsFile} and follow it exactly.`;
    await this.tmux(['set-buffer', '-b', buffer, '--', text]);
    await this.tmux(['paste-buffer', '-d', '-b', buffer, '-t', this.session]);
    await new Promise((resolve) => setTimeout(resolve, this.enterDelayMs));
    await this.tmux(['send-keys', '-t', this.session, 'C-m']);
    return { ownsProcess: false, exited: new Promise<AgentExit>(() => undefined), stop: async () => {} };
  }

  private tmux(args: string[]): Promise<string> {
    const full = this.serverName ? ['-L', this.serverName, ...args] : args;
    return new Promise((resolve, reject) => {
      execFile('tmux', full, { timeout: 10_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
    });
  }
}
