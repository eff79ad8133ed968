// The MassGen sessions search over real HTTP: plain text in any case, never a pattern, so a
// query built to backtrack cannot hold the server; the length is bounded with a 400 that names it.
import { cpSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempProject, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

const SESSION = 'log_20251201_091040_312100';

let project: TempProject;
let ui: UiProcess;

beforeAll(async () => {
  project = tempProject();
  cpSync(path.join(REPO_ROOT, 'examples', 'massgen_logs', SESSION), project.path(`logs/${SESSION}`), { recursive: true });
  ui = new UiProcess(['ui', '--logs-dir', 'logs'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
});

function sessions(q: string): string {
  return `/api/massgen/sessions?q=${encodeURIComponent(q)}`;
}

describe('refinery ui sessions search', () => {
  it('search - a catastrophic-backtracking pattern is plain text: it answers, and so does a request sent meanwhile', async () => {
    // As a regular expression this backtracks for minutes over a 26-character session name.
    const searched = ui.request(sessions('^((\\w+)+)+$'), { auth: true });
    const other = ui.request('/api/overview', { auth: true });
    const [search, overview] = await Promise.all([searched, other]);
    expect(overview.status).toBe(200);
    expect(search.status, search.body).toBe(200);
    expect(JSON.parse(search.body)).toMatchObject({ total: 0, rows: [] });
    // The server still answers signals: it stops on SIGTERM.
    const stopped = ui.exited;
    ui.child.kill('SIGTERM');
    const exit = await stopped;
    expect(exit.code !== null || exit.signal !== null).toBe(true);
    ui = new UiProcess(['ui', '--logs-dir', 'logs'], project.root);
    await ui.ready;
  });

  it('search - text in any case is found in the session name; pattern characters are taken literally', async () => {
    const found = JSON.parse((await ui.request(sessions('LOG_20251201_0910'), { auth: true })).body) as { total: number; rows: unknown[] };
    expect(found.total).toBe(1);
    expect(found.rows).toEqual([expect.objectContaining({ session: SESSION })]);
    const literal = await ui.request(sessions('log_(2025'), { auth: true });
    expect(literal.status).toBe(200);
    expect(JSON.parse(literal.body)).toMatchObject({ total: 0 });
  });

  it('search - longer than the limit is a 400 that names the limit', async () => {
    const answer = await ui.request(sessions('a'.repeat(201)), { auth: true });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toBe('q: the search text is 201 characters; at most 200 are allowed (plain text, any case)');
  });
});
