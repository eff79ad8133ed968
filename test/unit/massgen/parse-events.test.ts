import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogWarning } from '../../../src/workflows/massgen/model.ts';
import { KeyFinder, parseEventsFile, scanString } from '../../../src/workflows/massgen/parse-events.ts';

const ev = (type: string, data: unknown, agent: string | null = 'agent_a', ts = '2026-11-30T06:48:29.358906'): string =>
  JSON.stringify({ timestamp: ts, event_type: type, agent_id: agent, round_number: 0, data });

async function parse(lines: string[], raw?: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'events-'));
  const file = path.join(dir, 'events.jsonl');
  writeFileSync(file, raw ?? `${lines.join('\n')}\n`);
  const warnings: LogWarning[] = [];
  const summary = await parseEventsFile(file, 'events.jsonl', (f, code, message) => warnings.push({ file: f, code, message }));
  return { summary, warnings };
}

describe('parseEventsFile', () => {
  it('scanString - reads event_type without parsing the line', () => {
    expect(scanString(Buffer.from(ev('vote', {})), Buffer.from('"event_type"'))).toBe('vote');
    expect(scanString(Buffer.from('{"event_type":"x"}'), Buffer.from('"event_type"'))).toBe('x');
    expect(scanString(Buffer.from('{"other": 1}'), Buffer.from('"event_type"'))).toBeNull();
  });

  it('KeyFinder - lines without the key never rescan the rest of the buffer', () => {
    const buf = Buffer.from('aaaa\nbbbb\ncc "k" dd\n');
    const finder = new KeyFinder(Buffer.from('"k"'));
    expect(finder.find(buf, 0, 4)).toBe(-1);
    expect(finder.find(buf, 5, 9)).toBe(-1);
    expect(finder.find(buf, 10, 20)).toBe(13);
    expect(finder.find(buf, 21, 21)).toBe(-1);
  });

  it('parseEventsFile - collects answers, votes, restarts, tool commands and API errors', async () => {
    const { summary, warnings } = await parse([
      ev('thinking', { content: 'hmm', done: false }),
      ev('answer_submitted', { content: 'answer text', answer_number: 1, answer_label: 'agent1.1' }),
      ev('vote', { target_id: 'agent_b', reason: 'best', vote_label: null }, 'agent_c'),
      ev('agent_restart', { restart_round: 2, restart_reason: 'new answer' }),
      ev('tool_start', { tool_id: 't1', tool_name: 'execute_command', args: { command: 'ls -la' } }),
      ev('tool_complete', { tool_id: 't1', tool_name: 'execute_command', result: 'x'.repeat(50), elapsed_seconds: 1.5, is_error: false }),
      ev('text', { content: '❌ Error: Error code: 500 - boom' }, 'agent_b'),
      ev('text', { content: '🔄 Vote for [agent_a] ignored (reason: x) - restarting due to new answers' }),
      ev('text', { content: 'plain fragment' }),
    ]);
    expect(warnings).toEqual([]);
    expect(summary?.lines).toBe(9);
    expect(summary?.byType).toMatchObject({ thinking: 1, text: 3, vote: 1 });
    expect(summary?.answers).toEqual([
      { agentId: 'agent_a', label: 'agent1.1', timestamp: '2026-11-30T06:48:29.358906', content: 'answer text' },
    ]);
    expect(summary?.votes[0]).toMatchObject({ agentId: 'agent_c', targetId: 'agent_b', reason: 'best' });
    expect(summary?.restarts).toHaveLength(1);
    expect(summary?.commands).toEqual([
      { agentId: 'agent_a', command: 'ls -la', source: 'events.jsonl', seconds: 1.5, outputChars: 50, isError: false },
    ]);
    expect(summary?.errors).toEqual([
      { agentId: 'agent_b', timestamp: '2026-11-30T06:48:29.358906', message: 'Error: Error code: 500 - boom', source: 'text' },
    ]);
    expect(summary?.ignoredVotes).toHaveLength(1);
  });

  it('parseEventsFile - a line cut off mid-write is a warning, not an exception', async () => {
    const good = ev('vote', { target_id: 'agent_b', reason: 'r' });
    const { summary, warnings } = await parse([], `${good}\n${good.slice(0, 40)}`);
    expect(summary?.votes).toHaveLength(1);
    expect(warnings.map((w) => w.code).sort()).toEqual(['malformed-lines', 'truncated']);
  });

  it('parseEventsFile - garbage lines and wrong types are skipped with one warning', async () => {
    const { summary, warnings } = await parse([
      '\u0000\u0001garbage',
      '[1,2,3]',
      ev('vote', 'not-an-object'),
      '{"event_type": "vote", broken}',
      ev('status', { message: 'ok' }),
    ]);
    expect(summary?.votes).toEqual([{ agentId: 'agent_a', targetId: null, reason: '', timestamp: '2026-11-30T06:48:29.358906' }]);
    expect(summary?.malformedLines).toBe(3);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toContain('first at line 1');
  });

  it('parseEventsFile - an empty file is reported', async () => {
    const { warnings } = await parse([], '');
    expect(warnings.map((w) => w.code)).toEqual(['empty']);
  });

  it('parseEventsFile - a huge tool result line is read from head and tail only', async () => {
    const big = ev('tool_complete', {
      tool_id: 't9',
      tool_name: 'read_file',
      result: 'r'.repeat(400_000),
      elapsed_seconds: 2.25,
      status: 'ok',
      is_error: true,
    });
    const { summary } = await parse([ev('tool_start', { tool_id: 't9', tool_name: 'read_file', args: { command: 'cat big' } }), big]);
    expect(summary?.tools[0]).toMatchObject({ name: 'read_file', seconds: 2.25, isError: true });
    expect(summary?.tools[0]?.outputChars).toBeGreaterThan(400_000);
    expect(summary?.commands[0]?.command).toBe('cat big');
  });
});
