import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { splitWords } from '../../../src/workflows/massgen/experiments/command-words.ts';
import { agentErrors, progressMessage, readLiveStatus } from '../../../src/workflows/massgen/experiments/status-progress.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function file(text: string | undefined): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-status-'));
  dirs.push(dir);
  const f = path.join(dir, 'status.json');
  if (text !== undefined) writeFileSync(f, text);
  return f;
}

const STATUS = {
  coordination: { phase: 'enforcement', completion_percentage: 66 },
  agents: { agent_a: { status: 'voted', error: null }, agent_b: { status: 'error', error: { type: 'error', message: 'Error code: 500' } } },
  results: { winner: null },
  finish_reason: 'in_progress',
};

describe('MassGen run following', () => {
  it('splitWords - words as a shell splits them, quotes and escapes kept, no expansion', () => {
    expect(splitWords('uv run massgen')).toEqual(['uv', 'run', 'massgen']);
    expect(splitWords(`"/opt/my tools/massgen" --logfire 'a b'\\ c $HOME`)).toEqual([
      '/opt/my tools/massgen',
      '--logfire',
      'a b c',
      '$HOME',
    ]);
    expect(splitWords('  ')).toEqual([]);
    expect(() => splitWords('massgen "unclosed')).toThrow(/unclosed " quote/);
  });

  it('readLiveStatus - a whole status.json gives the fraction, phase and each agent', async () => {
    const status = await readLiveStatus(file(JSON.stringify(STATUS)));
    expect(status?.fraction).toBeCloseTo(0.66);
    expect(status && progressMessage(status)).toBe('enforcement · agent_a voted, agent_b error');
    expect(agentErrors(status)).toEqual(['agent_b: Error code: 500']);
  });

  it('readLiveStatus - a half-written or missing status.json is no status, not an error', async () => {
    const text = JSON.stringify(STATUS, null, 2);
    expect(await readLiveStatus(file(text.slice(0, text.length / 2)))).toBeUndefined();
    expect(await readLiveStatus(file(undefined))).toBeUndefined();
    expect(await readLiveStatus(file(''))).toBeUndefined();
  });

  it("readLiveStatus - the skill's agents[] list is read as MassGen's object keyed by id", async () => {
    const status = await readLiveStatus(file(JSON.stringify({ ...STATUS, agents: [{ id: 'x', status: 'streaming', error: null }] })));
    expect(status?.agents).toEqual({ x: { status: 'streaming', error: null } });
  });
});
