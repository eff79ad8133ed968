import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../../src/workflows/massgen/parse-trace.ts';

const FENCE = '```';

describe('parseTrace', () => {
  it('parseTrace - parallel calls before results, a result containing a fence, errors and votes', () => {
    const text = [
      '# Execution Trace: agent_c',
      '**Model**: gpt-5.2 | **Started**: 2026-02-24 18:16:53',
      '',
      '### Reasoning',
      'thinking about it',
      '',
      '### Tool Call: execute_command',
      '**Args**:',
      `${FENCE}json`,
      '{"command": "ls -la", "cwd": "/w"}',
      FENCE,
      '',
      '### Tool Call: read_file',
      '**Args**:',
      `${FENCE}json`,
      '{"path": "a.md"}',
      FENCE,
      '',
      '### Tool Result: execute_command',
      FENCE,
      'total 0',
      `${FENCE}python`,
      'print(1)',
      FENCE,
      'end',
      FENCE,
      '',
      '### Tool Error: read_file',
      FENCE,
      'No such file',
      FENCE,
      '',
      '### Tool Call: vote',
      '**Args**:',
      `${FENCE}json`,
      '{"agent_id": "agent3", "reason": "r"}',
      FENCE,
      '',
      '### Vote Cast: agent3.1',
      '**Voted for**: agent3.1',
      '',
      '---',
      '',
      '## Errors',
      '',
      '- [18:17:00] **Tool Error: read_file** - No such file',
    ].join('\n');
    const t = parseTrace(text);
    expect(t).toMatchObject({ agentId: 'agent_c', model: 'gpt-5.2', started: '2026-02-24 18:16:53', votesCast: 1 });
    expect(t.toolCalls.map((c) => [c.tool, c.command, c.isError])).toEqual([
      ['execute_command', 'ls -la', false],
      ['read_file', null, true],
      ['vote', null, false],
    ]);
    expect(t.toolCalls[0]?.resultChars).toBe('total 0\n```python\nprint(1)\n```\nend'.length);
    expect(t.toolCalls[0]?.argsKey).toBe('execute_command:{"command":"ls -la","cwd":"/w"}');
    expect(t.reasoningChars).toBe('thinking about it'.length);
  });

  it('parseTrace - unparsable args and garbage never throw', () => {
    const t = parseTrace('### Tool Call: x\n**Args**:\n```json\n{"raw": \n\u0000\u0001');
    expect(t.toolCalls[0]?.tool).toBe('x');
    expect(parseTrace('').toolCalls).toEqual([]);
  });
});
