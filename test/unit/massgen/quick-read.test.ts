// The quick reads `logs list` makes of every run: the session a folder names, from MassGen's
// execution_metadata.yaml (a PyYAML block dump) without a YAML parse where the dump is plain.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blockScalars, quickSessionMarker } from '../../../src/workflows/massgen/quick-read.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'quick-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('quick reads', () => {
  it('blockScalars - session_id and mode of one top-level block; a quoted or tagged value asks for a full parse', () => {
    const text =
      'query: q\nconfig:\n  agents: []\n  session_id: session_x\ncli_args:\n  question: what\n  session_id: null\n  mode: interactive\npython_version: 3.11\n';
    expect(blockScalars(text, 'cli_args')).toEqual({ session_id: null, mode: 'interactive' });
    expect(blockScalars(text, 'config')).toEqual({ session_id: 'session_x' });
    expect(blockScalars(text, 'git')).toEqual({});
    expect(blockScalars('cli_args:\n  session_id: "session_1"\n', 'cli_args')).toBeNull();
  });

  it('quickSessionMarker - an automation run given --session-id continues; an interactive turn is a member; massgen.log names the creator', () => {
    const run = (name: string, metadata: string, log = ''): string => {
      const d = path.join(dir, name);
      mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, 'execution_metadata.yaml'), metadata);
      if (log) writeFileSync(path.join(d, 'massgen.log'), log);
      return d;
    };
    const continued = run('a', 'query: q\ncli_args:\n  question: q\n  session_id: session_20250101_000000\n  continue_session: false\n');
    expect(quickSessionMarker(continued, 'turn_1/attempt_1')).toEqual({
      id: 'session_20250101_000000',
      role: 'continued',
      evidence: 'turn_1/attempt_1/execution_metadata.yaml cli_args.session_id',
    });
    const member = run('b', 'cli_args:\n  mode: interactive\n  turn: 2\n  session_id: session_20250101_000000\n');
    expect(quickSessionMarker(member, '')?.role).toBe('member');
    const created = run(
      'c',
      'cli_args:\n  session_id: null\n',
      '10:00:00 | INFO     | Logging enabled\n10:00:00 | INFO     | 📝 Created session for single-question mode: session_20250101_000000\n',
    );
    expect(quickSessionMarker(created, '')).toEqual({ id: 'session_20250101_000000', role: 'created', evidence: 'massgen.log line 2' });
    expect(quickSessionMarker(run('d', 'cli_args:\n  session_id: null\n'), '')).toBeNull();
  });
});
