import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '../../..');
const root = mkdtempSync(join(tmpdir(), 'massgen-gen-pad-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const eventsPath = (out: string): string => {
  const log = readdirSync(out).find((n) => n.startsWith('log_')) ?? '';
  return join(out, log, 'turn_1', 'attempt_1', 'events.jsonl');
};

describe('events.jsonl padding', () => {
  it('--events-bytes - pads to about N bytes with valid, ordered text/thinking lines (real CLI run)', async () => {
    const out = join(root, 'padded');
    const target = 3_000_000;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'scripts/gen-massgen-logs.ts', '--out', out, '--seed', '4', '--scenario', 'consensus', '--events-bytes', '3m'],
      { cwd: REPO },
    );
    expect(stdout).toContain('wrote 1 log dirs');
    const path = eventsPath(out);
    const size = statSync(path).size;
    expect(size).toBeGreaterThanOrEqual(target);
    expect(size).toBeLessThan(target + 1_000);
    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    let last = '';
    const types = new Set<string>();
    for (const line of lines) {
      const e = JSON.parse(line) as {
        timestamp: string;
        event_type: string;
        agent_id: string | null;
        round_number: number;
        data: Record<string, unknown>;
      };
      expect(Object.keys(e)).toEqual(['timestamp', 'event_type', 'agent_id', 'round_number', 'data']);
      expect(e.timestamp >= last, `timestamps go backwards at ${e.timestamp}`).toBe(true);
      last = e.timestamp;
      types.add(e.event_type);
      if (e.event_type === 'thinking') expect(Object.keys(e.data)).toEqual(['content', 'done']);
    }
    expect(lines.length).toBeGreaterThan(10_000);
    expect([...types].sort()).toEqual(expect.arrayContaining(['answer_submitted', 'text', 'thinking', 'vote']));
  });

  it('--events-bytes - padding only adds text/thinking lines; every original line keeps its order and bytes', () => {
    const plain = join(root, 'plain');
    const padded = join(root, 'padded-lib');
    generateLogs({ outDir: plain, seed: 8, scenarios: ['enforcement'] });
    generateLogs({ outDir: padded, seed: 8, scenarios: ['enforcement'], eventsBytes: 400_000 });
    const base = readFileSync(eventsPath(plain), 'utf8').split('\n').filter(Boolean);
    const all = readFileSync(eventsPath(padded), 'utf8').split('\n').filter(Boolean);
    const baseSet = new Set(base);
    const kept = all.filter((l) => baseSet.has(l));
    expect(kept).toEqual(base);
    for (const extra of all.filter((l) => !baseSet.has(l))) {
      expect(['text', 'thinking']).toContain((JSON.parse(extra) as { event_type: string }).event_type);
    }
    // other files are unaffected by padding
    const status = (dir: string): string => readFileSync(eventsPath(dir).replace('events.jsonl', 'status.json'), 'utf8');
    expect(status(padded)).toBe(status(plain));
  });

  it('gen-massgen-logs - bad arguments give a clear error and exit code 2', async () => {
    const fail = async (args: string[]): Promise<{ code: number; stderr: string }> => {
      try {
        await run(process.execPath, ['--import', 'tsx', 'scripts/gen-massgen-logs.ts', ...args], { cwd: REPO });
        return { code: 0, stderr: '' };
      } catch (error) {
        const e = error as { code: number; stderr: string };
        return { code: e.code, stderr: e.stderr };
      }
    };
    const missing = await fail([]);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain('--out DIR is required');
    const scenario = await fail(['--out', join(root, 'x'), '--scenario', 'nope']);
    expect(scenario.code).toBe(2);
    expect(scenario.stderr).toContain("unknown scenario 'nope'; choose from: consensus, enforcement");
    const bytes = await fail(['--out', join(root, 'x'), '--events-bytes', 'lots']);
    expect(bytes.stderr).toContain("--events-bytes 'lots' is not a size");
  });
});
