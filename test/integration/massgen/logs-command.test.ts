import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { logsCommand } from '../../../src/cli/commands/logs.ts';
import { memoryIo } from '../../helpers/memory-io.ts';
import { FIXTURES } from './fixture-truth.ts';

async function run(cwd: string, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const memory = memoryIo(cwd);
  const code = await logsCommand.run(argv, memory.io);
  return { code, out: memory.out(), err: memory.err() };
}

function project(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'logs-cli-'));
  const logs = path.join(root, '.massgen/massgen_logs');
  for (const scenario of ['consensus-3', 'killed']) cpSync(path.join(FIXTURES, 'massgen-v0191', scenario), logs, { recursive: true });
  cpSync(path.join(FIXTURES, 'massgen-real/.massgen/massgen_logs'), logs, { recursive: true });
  return root;
}

describe('refinery logs', () => {
  it('logs list - newest first with wall-clock duration and question, like massgen logs list', async () => {
    const root = project();
    const { code, out } = await run(root, ['list']);
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines[0]).toBe('Recent Runs');
    expect(lines[1]).toMatch(/^#\s+Timestamp\s+Duration\s+Cost\s+Analyzed\s+Question$/);
    expect(lines[2]).toContain('2026-11-30 06:48');
    expect(lines[2]).toContain('Summarize the causes of the Fren...');
    expect(lines.at(-1)).toContain('13m 34s');
    const json = JSON.parse((await run(root, ['list', '--json', '--limit', '2'])).out) as { session: string }[];
    expect(json.map((r) => r.session)).toEqual(['log_20261130_064840_961991', 'log_20261130_064801_485886']);
  });

  it('logs analyze - writes report and analysis atomically; list then shows the turn as analyzed until a log file changes', async () => {
    const root = project();
    const { code, out } = await run(root, ['analyze', '--log-dir', '.massgen/massgen_logs/log_20261130_064801_485886']);
    expect(code).toBe(0);
    expect(out).toContain('completed, winner agent_b');
    const turn = path.join(root, '.massgen/massgen_logs/log_20261130_064801_485886/turn_1');
    expect(readdirSync(turn).sort()).toEqual(['ANALYSIS_REPORT.md', 'analysis.json', 'attempt_1', 'final']);
    expect(readFileSync(path.join(turn, 'ANALYSIS_REPORT.md'), 'utf8')).toContain('## 8. Recommendations');
    const analyzed = JSON.parse((await run(root, ['list', '--analyzed', '--json'])).out) as { session: string }[];
    expect(analyzed.map((r) => r.session)).toEqual(['log_20261130_064801_485886']);
    const unanalyzed = JSON.parse((await run(root, ['list', '--unanalyzed', '--json'])).out) as { session: string }[];
    expect(unanalyzed.map((r) => r.session)).not.toContain('log_20261130_064801_485886');
    // A log file newer than the report makes the turn stale again.
    const report = statSync(path.join(turn, 'ANALYSIS_REPORT.md')).mtimeMs / 1000;
    utimesSync(path.join(turn, 'attempt_1/massgen.log'), report + 10, report + 10);
    expect(JSON.parse((await run(root, ['list', '--analyzed', '--json'])).out)).toEqual([]);
    // An empty report does not count.
    writeFileSync(path.join(turn, 'ANALYSIS_REPORT.md'), '');
    expect(JSON.parse((await run(root, ['list', '--analyzed', '--json'])).out)).toEqual([]);
  });

  it('logs analyze - defaults to the newest session; legacy flat logs get the report at the log root', async () => {
    const root = project();
    const newest = await run(root, ['analyze']);
    expect(newest.out).toContain('log_20261130_064840_961991 turn_1: incomplete');
    const legacy = await run(root, ['analyze', '--log-dir', '.massgen/massgen_logs/log_20251025_225510']);
    expect(legacy.code).toBe(0);
    expect(readdirSync(path.join(root, '.massgen/massgen_logs/log_20251025_225510'))).toContain('ANALYSIS_REPORT.md');
  });

  it('logs analyze RUN - the # of logs list, a log_* name or a path picks the run, as for bundle', async () => {
    const root = project();
    const listed = (JSON.parse((await run(root, ['list', '--json'])).out) as { session: string }[]).map((r) => r.session);
    expect(listed[1]).toBe('log_20261130_064801_485886');
    const second = await run(root, ['analyze', '2']);
    expect(second.code, second.err).toBe(0);
    expect(second.out).toContain('log_20261130_064801_485886 turn_1: completed, winner agent_b');
    const byName = await run(root, ['analyze', 'log_20251025_225510']);
    expect(byName.code, byName.err).toBe(0);
    expect(readdirSync(path.join(root, '.massgen/massgen_logs/log_20251025_225510'))).toContain('ANALYSIS_REPORT.md');
    expect(await run(root, ['analyze', String(listed.length + 1)])).toMatchObject({
      code: 2,
      err: expect.stringContaining('pass a log_* name or a # from `refinery logs list`'),
    });
    expect(await run(root, ['analyze', '1', '--log-dir', '.massgen/massgen_logs/log_20251025_225510'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('give RUN or --log-dir, not both'),
    });
  });

  it('logs - bad arguments give exit code 2 and a message naming the fix', async () => {
    const root = project();
    expect(await run(root, ['list', '--limit', 'x'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('--limit must be a positive integer'),
    });
    expect(await run(root, ['list', '--analyzed', '--unanalyzed'])).toMatchObject({ code: 2 });
    expect(await run(root, ['frobnicate'])).toMatchObject({ code: 2, err: expect.stringContaining("unknown subcommand 'frobnicate'") });
    expect(await run(root, ['analyze', '--log-dir', '.massgen/massgen_logs/log_20261130_064801_485886', '--turn', '7'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('has no turn 7; turns: 1'),
    });
    expect(await run(root, ['list', '--bogus'])).toMatchObject({ code: 2 });
  });
});
