// MassGen 0.1.97: a call a permission hook denied is `tool_start` + `tool_complete` (status "denied",
// is_error, the reason in `result`). It is counted as denied, never as a failure, a command or a timing.
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '../../helpers/memory-io.ts';
import { logsCommand } from '../../../src/cli/commands/logs.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { listTurnUnits } from '../../../src/workflows/massgen/discover.ts';
import { FIXTURES } from './fixture-truth.ts';

const registry = new SchemaRegistry(path.resolve(import.meta.dirname, '../../..'));

async function analyze(scenario: string) {
  const [unit] = await listTurnUnits(path.join(FIXTURES, 'massgen-v0197', scenario));
  if (!unit) throw new Error(`no turn in ${scenario}`);
  return analyzeTurnUnit(unit, { nowMs: Date.parse('2026-12-01T00:00:00Z') });
}

describe('MassGen 0.1.97 denied tool calls', () => {
  it('analysis - denied calls are counted as denied per tool, not as failures, commands or time', async () => {
    const { analysis, report } = await analyze('denied');
    expect(registry.validate('turn-analysis', analysis)).toEqual({ ok: true });
    const shell = analysis.tools.find((t) => t.name === 'mcp__command_line__execute_command');
    expect(shell).toMatchObject({ calls: 1, failures: 0, denied: 1, totalSeconds: 0, avgSeconds: 0 });
    expect(analysis.tools.reduce((n, t) => n + t.failures, 0)).toBe(0);
    expect(analysis.errors.failedToolCalls).toEqual([]);
    expect(analysis.commands.total).toBe(0);
    expect(analysis.errors.deniedToolCalls).toEqual([
      {
        tool: 'mcp__command_line__execute_command',
        agentId: 'agent_a',
        reason: "Permission denied by hook: command 'rm -rf' is not allowed (pattern: rm -rf*)",
        source: 'events.jsonl',
      },
      {
        tool: 'mcp__filesystem__write_file',
        agentId: 'agent_c',
        reason: "Permission denied by hook: write outside the agent's workspace (/etc/hosts)",
        source: 'events.jsonl',
      },
    ]);
    expect(report).toContain('### Denied Tool Calls');
    expect(report).toMatch(/\| agent_a \| mcp\\_\\_command_line\\_\\_execute_command \| 1 \| Permission denied by hook/);
    expect(report).not.toContain('rm -rf /tmp/build');
  });

  it('analysis - execution_metadata.yaml with cli_args.inbox_dir and a permissions block reads without warnings', async () => {
    const { analysis } = await analyze('denied');
    expect(analysis.source.massgenVersion).toBe('0.1.97');
    expect(analysis.warnings.filter((w) => w.file.endsWith('execution_metadata.yaml'))).toEqual([]);
    expect(analysis.config.agents.map((a) => a.id)).toEqual(['agent_a', 'agent_b', 'agent_c']);
  });

  it('analysis - a killed run (no metrics_events.json) keeps the result text as the denied reason', async () => {
    const { analysis } = await analyze('denied-killed');
    expect(analysis.state.value).toBe('incomplete');
    expect(analysis.errors.deniedToolCalls.map((d) => [d.agentId, d.reason])).toEqual([
      ['agent_a', "Permission denied by hook: command 'rm -rf' is not allowed (pattern: rm -rf*)"],
      ['agent_c', "Permission denied by hook: write outside the agent's workspace (/etc/hosts)"],
    ]);
    expect(analysis.errors.failedToolCalls).toEqual([]);
    expect(analysis.tools.map((t) => [t.name, t.calls, t.failures, t.denied])).toEqual([
      ['mcp__command_line__execute_command', 1, 0, 1],
      ['mcp__filesystem__write_file', 1, 0, 1],
    ]);
  });
});

describe('MassGen 0.1.97 denied tool calls in logs summary', () => {
  it('logs summary - counts denied calls per agent and tool in logs-summary.json, LOGS_SUMMARY.md and its output', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'denied-summary-'));
    cpSync(path.join(FIXTURES, 'massgen-v0197', 'denied'), path.join(root, '.massgen/massgen_logs'), { recursive: true });
    const { code, out } = await runLogs(root, ['summary']);
    expect(code).toBe(0);
    expect(out).toContain('denied tool calls 2: agent_a mcp__command_line__execute_command 1, agent_c mcp__filesystem__write_file 1');
    const summary = JSON.parse(readFileSync(path.join(root, '.massgen/massgen_logs/logs-summary.json'), 'utf8'));
    expect(registry.validate('runs-summary', summary)).toEqual({ ok: true });
    expect(summary.totals.deniedToolCalls).toBe(2);
    expect(summary.deniedToolCalls.byAgentTool).toEqual([
      { agent: 'agent_a', tool: 'mcp__command_line__execute_command', denied: 1 },
      { agent: 'agent_c', tool: 'mcp__filesystem__write_file', denied: 1 },
    ]);
    expect(readFileSync(path.join(root, '.massgen/massgen_logs/LOGS_SUMMARY.md'), 'utf8')).toContain(
      '## Denied tool calls by agent and tool',
    );
  });
});

async function runLogs(cwd: string, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const memory = memoryIo(cwd);
  const code = await logsCommand.run(argv, memory.io);
  return { code, out: memory.out(), err: memory.err() };
}
