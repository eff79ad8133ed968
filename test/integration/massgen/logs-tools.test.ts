// `refinery logs tools` through the real CLI on the 0.1.97-shaped killed run (no metrics files, so the
// table comes from events.jsonl), with tool calls that ran added to its events.
import { appendFileSync, cpSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { FIXTURES } from './fixture-truth.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

function event(type: string, agent: string, data: Record<string, unknown>): string {
  return `${JSON.stringify({ timestamp: '2026-11-30T06:48:44.000000', event_type: type, agent_id: agent, round_number: 1, data })}\n`;
}

/** agent_b: three web searches of 0.5 s (one failed), one file read of 2 s; plus the fixture's two denied calls. */
function logsWithTools(): string {
  project = tempProject();
  const logs = project.path('logs');
  cpSync(path.join(FIXTURES, 'massgen-v0197', 'denied-killed'), logs, { recursive: true });
  const log = readdirSync(logs).find((n) => n.startsWith('log_')) as string;
  const events = path.join(logs, log, 'turn_1', 'attempt_1', 'events.jsonl');
  const call = (id: string, tool: string, seconds: number, isError: boolean): void => {
    appendFileSync(events, event('tool_start', 'agent_b', { tool_id: id, tool_name: tool, args: { q: id }, server_name: 's' }));
    appendFileSync(
      events,
      event('tool_complete', 'agent_b', {
        tool_id: id,
        tool_name: tool,
        result: isError ? 'boom' : 'ok',
        elapsed_seconds: seconds,
        status: isError ? 'error' : 'success',
        is_error: isError,
        async_id: null,
      }),
    );
  };
  call('w1', 'mcp__search__web', 0.5, false);
  call('w2', 'mcp__search__web', 0.5, true);
  call('w3', 'mcp__search__web', 0.5, false);
  call('r1', 'mcp__files__read', 2, false);
  return log;
}

describe('refinery logs tools', () => {
  it('logs tools - per tool calls, failures, denied, total and mean time; sorted by time, or by calls', async () => {
    logsWithTools();
    const root = (project as TempProject).root;
    const byTime = await runCli(['logs', 'tools', '--logs', 'logs'], { cwd: root });
    expect(byTime.stderr).toBe('');
    expect(byTime.code).toBe(0);
    const lines = byTime.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/turn 1: 6 tool call\(s\), 1 failed, 2 denied$/);
    expect(lines[1]).toMatch(/^Tool\s+Calls\s+Failures\s+Denied\s+Total \(s\)\s+Mean \(s\)$/);
    expect(lines[2]).toMatch(/^mcp__files__read\s+1\s+0\s+0\s+2\.00\s+2\.00$/);
    expect(lines[3]).toMatch(/^mcp__search__web\s+3\s+1\s+0\s+1\.50\s+0\.50$/);
    const byCalls = await runCli(['logs', 'tools', '--logs', 'logs', '--sort', 'calls'], { cwd: root });
    expect(byCalls.stdout.trim().split('\n')[2]).toMatch(/^mcp__search__web\s+3/);
  });

  it('logs tools - --by-agent --json gives one row per agent and tool, denied calls with no time', async () => {
    const log = logsWithTools();
    const root = (project as TempProject).root;
    const { code, stdout } = await runCli(['logs', 'tools', log, '--logs', 'logs', '--by-agent', '--json'], { cwd: root });
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as {
      tools: { agentId: string; name: string; calls: number; failures: number; denied: number; totalSeconds: number }[];
    };
    const rows = json.tools.map((r) => [r.agentId, r.name, r.calls, r.failures, r.denied, r.totalSeconds]);
    expect(rows).toEqual([
      ['agent_b', 'mcp__files__read', 1, 0, 0, 2],
      ['agent_b', 'mcp__search__web', 3, 1, 0, 1.5],
      ['agent_a', 'mcp__command_line__execute_command', 1, 0, 1, 0],
      ['agent_c', 'mcp__filesystem__write_file', 1, 0, 1, 0],
    ]);
  });

  it('logs tools - a bad --sort or an unknown RUN exits 2 naming it', async () => {
    logsWithTools();
    const root = (project as TempProject).root;
    const sort = await runCli(['logs', 'tools', '--logs', 'logs', '--sort', 'size'], { cwd: root });
    expect(sort.code).toBe(2);
    expect(sort.stderr).toContain("--sort must be time or calls, got 'size'");
    const run = await runCli(['logs', 'tools', 'log_nope', '--logs', 'logs'], { cwd: root });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no run 'log_nope'");
  });
});
