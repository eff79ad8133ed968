import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogWarning } from '../../../src/workflows/massgen/model.ts';
import { parseTextLog } from '../../../src/workflows/massgen/parse-text-log.ts';

async function parse(text: string, kind: 'massgen' | 'streaming') {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'log-')), 'x.log');
  writeFileSync(file, text);
  const warnings: LogWarning[] = [];
  const summary = await parseTextLog(file, 'x.log', (f, code, message) => warnings.push({ file: f, code, message }), kind);
  return { summary, warnings };
}

describe('parseTextLog', () => {
  it('parseTextLog - counts levels, keeps errors, tracebacks and timeouts of massgen.log', async () => {
    const { summary, warnings } = await parse(
      [
        '06:48:27 | INFO     | Logging enabled',
        '06:48:30 | ERROR    | Streaming error: Error code: 500 - boom',
        '06:48:31 | WARNING  | Agent agent_c timed out after 240s',
        'Traceback (most recent call last):',
        'ValueError: too many values to unpack (expected 3)',
        '06:48:32.123 | DEBUG | massgen.x:f:12 - debug line',
        '',
      ].join('\n'),
      'massgen',
    );
    expect(warnings).toEqual([]);
    expect(summary?.byLevel).toEqual({ INFO: 1, ERROR: 1, WARNING: 1, DEBUG: 1 });
    expect(summary?.errors).toEqual([{ line: 2, time: '06:48:30', message: 'Streaming error: Error code: 500 - boom' }]);
    expect(summary?.timeouts.map((t) => t.line)).toEqual([3]);
    expect(summary?.exceptions.map((e) => e.line)).toEqual([4, 5]);
  });

  it('parseTextLog - a cut-off or non-MassGen file is a warning', async () => {
    expect((await parse('06:48:27 | INFO     | cut', 'massgen')).warnings.map((w) => w.code)).toEqual(['truncated']);
    expect((await parse('\u0000\u0001 garbage\n', 'massgen')).warnings.map((w) => w.code)).toEqual(['unrecognized']);
  });

  it('parseTextLog - extracts command strings from streaming_debug.log chunks', async () => {
    const line = `12:00:00.000 | 🔹 [chat] Yielding chunk: StreamChunk(type='tool_calls', content='{"command": "npm install", "cwd": "/w"}', source='agent_a')\n`;
    const { summary } = await parse(line + line, 'streaming');
    expect(summary?.commands.map((c) => [c.command, c.agentId])).toEqual([
      ['npm install', 'agent_a'],
      ['npm install', 'agent_a'],
    ]);
  });
});
