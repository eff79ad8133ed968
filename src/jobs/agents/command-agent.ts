import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { AgentStartError, type Agent, type AgentExit, type AgentHandle, type AgentLaunch } from './agent.ts';

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
    const child = spawn(file, args, {
      cwd: launch.workdir,
      env: launch.env,
      stdio: ['pipe', out, out],
      detached: true,
    });
    closeSync(out);
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new AgentStartError(
            error.code === 'ENOENT' ? `agent command '${file}' was not found on PATH` : `cannot start agent command '${file}': ${error.message}`,
          ),
        ),
      );
    });
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(launch.instructions);
    const exited = new Promise<AgentExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    let running = true;
    void exited.then(() => {
      running = false;
    });
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    return {
      ownsProcess: true,
      exited,
      stop: async () => {
        if (!running) return;
        killGroup('SIGTERM');
        const timer = setTimeout(() => killGroup('SIGKILL'), this.killGraceMs);
        await exited;
        clearTimeout(timer);
      },
    };
  }
}
