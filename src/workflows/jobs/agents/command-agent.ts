import { openSync, closeSync } from 'node:fs';
import { startInGroup } from '../../../engine/shell/process-group.ts';
import { AgentStartError, type Agent, type AgentHandle, type AgentLaunch } from './agent.ts';

/** Presets for the agent CLIs in non-interactive mode; the instructions go to stdin. */
export const AGENT_PRESETS: Record<string, string[]> = {
  'claude-code': ['claude', '-p'],
  claude: ['claude', '-p'],
  codex: ['codex', 'exec', '-'],
  gemini: ['gemini', '-p'],
};

/** A non-interactive CLI run once per phase, in its own process group, instructions on stdin. */
export class CommandAgent implements Agent {
  readonly kind = 'command';

  constructor(
    private readonly argv: string[],
    private readonly killGraceMs = 3000,
  ) {
    if (argv.length === 0 || argv[0] === '') throw new AgentStartError('the command agent needs a command (argv[0] is empty)');
  }

  describe(): string {
    return `command ${this.argv[0]}`;
  }

  async start(launch: AgentLaunch): Promise<AgentHandle> {
    const out = openSync(launch.outputFile, 'a', 0o600);
    const [file, ...args] = this.argv as [string, ...string[]];
    let proc;
    try {
      proc = await startInGroup({ executable: file, args, cwd: launch.workdir, env: launch.env, outputFd: out });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new AgentStartError(
        code === 'ENOENT'
          ? `agent command '${file}' was not found on PATH`
          : `cannot start agent command '${file}': ${(error as Error).message}`,
      );
    } finally {
      closeSync(out);
    }
    proc.child.stdin?.end(launch.instructions);
    return {
      ownsProcess: true,
      exited: proc.exited,
      stop: () => proc.stop(this.killGraceMs),
    };
  }
}
