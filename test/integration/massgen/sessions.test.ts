// Sessions as one story: `massgen --automation --session-id S` writes a new log folder whose turns
// continue S (spec §9, observed with v0.1.91: an orphan turn_1/attempt_1 with only events.jsonl,
// execution_metadata.yaml and massgen.log, then turn_2/attempt_1 with the rest). The folder is
// linked to the one that created S in the turn analyses, `logs list` and the summary.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { fleetScripts } from '../../../dev/massgen-gen/fleet.ts';
import type { RunsSummary } from '../../../src/workflows/massgen/runs-summary-model.ts';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { analysesUnder, expectPartsAddUp, expectTotalsOf } from './summary-checks.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const LOGS = '.massgen/massgen_logs';

/** Rewrites a freshly generated folder into a continuation of session `id`, as MassGen v0.1.91 lays one out. */
function makeContinuation(folder: string, id: string): void {
  renameSync(path.join(folder, 'turn_1'), path.join(folder, 'turn_2'));
  const orphan = path.join(folder, 'turn_1', 'attempt_1');
  const rest = path.join(folder, 'turn_2', 'attempt_1');
  mkdirSync(orphan, { recursive: true });
  renameSync(path.join(rest, 'events.jsonl'), path.join(orphan, 'events.jsonl'));
  const log = readFileSync(path.join(rest, 'massgen.log'), 'utf8')
    .replace(/📝 Created session for single-question mode: \S+/, `📚 Using session from CLI: ${id}`)
    .replace(/^.*Registered new session in registry.*\n/m, '');
  writeFileSync(path.join(orphan, 'massgen.log'), log);
  const metadata = readFileSync(path.join(rest, 'execution_metadata.yaml'), 'utf8').replace(/^( {2}session_id:) null$/m, `$1 ${id}`);
  expect(metadata).toContain(`session_id: ${id}`);
  writeFileSync(path.join(orphan, 'execution_metadata.yaml'), metadata);
  // turn_2/attempt_1 holds everything else: no events.jsonl, massgen.log or execution_metadata.yaml.
  for (const name of ['massgen.log', 'execution_metadata.yaml']) rmSync(path.join(rest, name));
}

function setUp(): { first: string; second: string; id: string } {
  project = tempProject();
  const logs = project.path(LOGS);
  const [first] = generateLogs({ outDir: logs, seed: 4, scripts: fleetScripts(1) }).logDirs as [string];
  const [second] = generateLogs({ outDir: logs, seed: 4, scripts: fleetScripts(1, undefined, 1), firstIndex: 1 }).logDirs as [string];
  const created = /Created session for single-question mode: (\S+)/.exec(
    readFileSync(path.join(logs, first, 'turn_1/attempt_1/massgen.log'), 'utf8'),
  );
  const id = created?.[1] as string;
  expect(id).toMatch(/^session_\d{8}_\d{6}$/);
  makeContinuation(path.join(logs, second), id);
  return { first, second, id };
}

describe('MassGen sessions continued with --session-id', () => {
  it('sessions - the continuing folder is linked to the one that started the session: turn analyses, logs summary, logs list', async () => {
    const { first, second, id } = setUp();
    const p = project as TempProject;
    const summaryRun = await runCli(['logs', 'summary', '--json'], { cwd: p.root });
    expect(summaryRun.code, summaryRun.stderr).toBe(0);
    const summary = JSON.parse(summaryRun.stdout) as RunsSummary;
    expect(summary.sessions).toEqual([
      {
        id,
        startedIn: first,
        links: [
          {
            folder: second,
            continues: first,
            evidence: expect.stringMatching(
              new RegExp(`^${second}/attempt_1/(execution_metadata\\.yaml cli_args\\.session_id|massgen\\.log line \\d+)$`),
            ),
          },
        ],
        turns: [
          expect.objectContaining({ session: first, turn: 1, role: 'created' }),
          expect.objectContaining({ session: second, turn: 1, role: 'continued', state: 'continued' }),
          expect.objectContaining({ session: second, turn: 2, role: 'member', state: 'completed' }),
        ],
      },
    ]);
    const rows = summary.runs.filter((r) => r.session === second);
    // The orphan turn_1 is the continuation's event stream, the same run as turn_2: counted once.
    expect(rows.map((r) => [r.turn, r.continues])).toEqual([[2, first]]);
    expect(summary.totals.turns).toBe(2);
    expect(summaryRun.stdout).not.toContain('run-incomplete');
    expect(summary.runs.find((r) => r.session === first)?.continues).toBeNull();
    // The continuation's orphan turn is counted with its turn_2, not as a run of its own.
    const counted = analysesUnder(p.path(LOGS)).filter((a) => (a as unknown as { state: { value: string } }).state.value !== 'continued');
    expect(counted).toHaveLength(2);
    expectTotalsOf(summary, counted);
    expectPartsAddUp(summary);
    const markdown = readFileSync(p.path(path.join(LOGS, 'LOGS_SUMMARY.md')), 'utf8');
    expect(markdown).toContain('## Sessions continued across log folders');
    expect(markdown).toContain(`\`${second}\` continues \`${first}\``);

    const orphan = JSON.parse(readFileSync(p.path(path.join(LOGS, second, 'turn_1/analysis.json')), 'utf8')) as {
      source: { massgenSession: unknown };
    };
    expect(orphan.source.massgenSession).toMatchObject({ id, role: 'continued' });
    const orphanAnalysis = orphan as unknown as { state: { value: string }; recommendations: { id: string; priority: string }[] };
    expect(orphanAnalysis.state.value).toBe('continued');
    expect(orphanAnalysis.recommendations.map((r) => r.id)).not.toContain('run-incomplete');
    const orphanReport = readFileSync(p.path(path.join(LOGS, second, 'turn_1/ANALYSIS_REPORT.md')), 'utf8');
    expect(orphanReport).not.toContain('stopped before it finished');
    expect(orphanReport).toContain('**Continuation:**');

    const listed = JSON.parse((await runCli(['logs', 'list', '--json'], { cwd: p.root })).stdout) as {
      session: string;
      continues: string | null;
      massgenSession: string | null;
    }[];
    expect(listed.map((r) => [r.session, r.massgenSession, r.continues])).toEqual([
      [second, id, first],
      [first, id, null],
    ]);
    const text = (await runCli(['logs', 'list'], { cwd: p.root })).stdout;
    expect(text.split('\n')[1]).toMatch(/Question\s+Continues$/);
    expect(text).toContain(`${first} (${id})`);
  }, 60_000);

  it('sessions - logs list finds the starting folder beyond --limit, before any analysis', async () => {
    const { first, second, id } = setUp();
    const p = project as TempProject;
    const listed = JSON.parse((await runCli(['logs', 'list', '--json', '--limit', '1'], { cwd: p.root })).stdout) as {
      session: string;
      continues: string | null;
    }[];
    expect(listed).toEqual([expect.objectContaining({ session: second, continues: first, massgenSession: id })]);
  }, 60_000);
});
