import { describe, expect, it } from 'vitest';
import { logDirLine, logDirOf, parseProgressLine, progressLine } from '../../../src/workflows/massgen/experiments/progress-line.ts';

describe('progress line', () => {
  it('progress-line - what run-massgen writes reads back as phase, agents and seconds', () => {
    const status = {
      phase: 'enforcement',
      agents: { agent_a: { status: 'voted', error: null }, 'agent b2': { status: 'streaming', error: null } },
    };
    const line = progressLine(status, 12_400);
    expect(line).toBe('enforcement · agent_a voted, agent b2 streaming · 12s');
    expect(parseProgressLine(line)).toEqual({
      phase: 'enforcement',
      agents: [
        { id: 'agent_a', status: 'voted' },
        { id: 'agent b2', status: 'streaming' },
      ],
      seconds: 12,
    });
  });

  it('progress-line - before status.json, and other messages, are a phase alone', () => {
    expect(parseProgressLine(progressLine(undefined, 3000))).toEqual({ phase: 'waiting for status.json', agents: [], seconds: 3 });
    expect(parseProgressLine('starting')).toEqual({ phase: 'starting', agents: [], seconds: null });
  });

  it('progress-line - the log dir line names the dir, and nothing else does', () => {
    expect(logDirOf(logDirLine('.massgen/massgen_logs/log_20260101_000000_000001'))).toBe(
      '.massgen/massgen_logs/log_20260101_000000_000001',
    );
    expect(logDirOf('LOG_DIR: /x')).toBeUndefined();
  });
});
