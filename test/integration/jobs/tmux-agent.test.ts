import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';
import { memoryIo, publishArgv, scriptedAgentArgv, tempDir } from './support.ts';

describe.skipIf(skipWithout(systemTool('tmux')))('tmux agent', () => {
  it('jobs submit --agent-kind tmux - pastes a short line naming the instructions file into a live session, whose agent reports back', async () => {
    const { dir, cleanup } = tempDir();
    const server = `refinery-test-${randomBytes(4).toString('hex')}`;
    try {
      execFileSync(
        'tmux',
        [
          '-L',
          server,
          'new-session',
          '-d',
          '-s',
          'agent',
          '-x',
          '200',
          '-y',
          '50',
          'env',
          'AGENT_INPUT=tmux-line',
          'AGENT_SCRIPT=started,completed:done in tmux',
          ...scriptedAgentArgv(),
        ],
        { cwd: dir },
      );
      const { io, out, err } = memoryIo(dir);
      const code = await jobsCommand.run(
        [
          'submit',
          '--prompt',
          'do it in tmux',
          '--agent',
          'claude-code',
          '--agent-kind',
          'tmux',
          '--agent-session',
          'tmux:agent',
          '--tmux-server',
          server,
          '--timeout',
          '20',
          '--publish-cmd',
          JSON.stringify(publishArgv(path.join(dir, '.mam/jobs'))),
        ],
        io,
      );
      expect(code, err()).toBe(0);
      expect(out()).toMatch(/seq=2 completed +done in tmux/);
    } finally {
      try {
        execFileSync('tmux', ['-L', server, 'kill-server'], { stdio: 'ignore' });
      } catch {
        // the pane's agent may already have ended the server
      }
      cleanup();
    }
  });

  it('jobs submit --agent-kind tmux - a missing session ends the job as error at once, with the reason', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const { io, out, err } = memoryIo(dir);
      const code = await jobsCommand.run(
        [
          'submit',
          '--prompt',
          'x',
          '--agent-kind',
          'tmux',
          '--agent-session',
          'tmux:nosuch',
          '--tmux-server',
          `refinery-none-${randomBytes(4).toString('hex')}`,
          '--timeout',
          '20',
        ],
        io,
      );
      expect(code).toBe(1);
      expect(err()).toContain("tmux session 'nosuch' does not exist");
      expect(out()).toMatch(/seq=1 error +agent failed to start/);
    } finally {
      cleanup();
    }
  });
});
