// The MassGen page's live experiment grid and a running run's live page, in chromium, while
// `refinery run experiments` drives the fake massgen (slow: each run takes seconds and rewrites
// its status.json and agent outputs as it goes). Everything waits on the page's DOM changing.
import { appendFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { CHROMIUM, launchBrowser, openDashboard } from './browser.ts';
import { UiProcess } from './ui-process.ts';

const FAKE = path.join(REPO_ROOT, 'test/helpers/fake-massgen.mjs');
const HOSTILE = '<img src=x onerror="window.__xss=1">';
const QUESTIONS = `What is the capital of France?\nIs ${HOSTILE} safe?\n`;

describe.skipIf(skipWithout(CHROMIUM))('dashboard - MassGen experiments live', () => {
  let project: TempProject;
  let ui: UiProcess;
  let browser: Browser;
  let run: Promise<CliResult>;

  beforeAll(async () => {
    const config = (ms: number): string => `agents:\n  - id: agent_a\n# fake-massgen: duration_ms=${ms} tick_ms=250\n`;
    project = tempProject({ 'configs/a.yaml': config(5000), 'configs/b.yaml': config(4000), 'questions.txt': QUESTIONS });
    ui = new UiProcess(['ui'], project.root);
    [browser] = await Promise.all([launchBrowser(), ui.ready]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await run?.catch(() => undefined);
    await ui?.stop();
    project?.cleanup();
  });

  it('experiments-ui - the grid follows each cell live, its links open the live run page (agent text growing, as text) and the report', async () => {
    const { go, page, problems, shot } = await openDashboard(browser, ui, { width: 1400, height: 1000 });
    await go('#/massgen');
    run = runCli(
      [
        'run',
        'experiments',
        '-k',
        '-j',
        '2',
        '--param',
        'configs=configs/*.yaml',
        '--param',
        'questions=questions.txt',
        '--param',
        `massgen=node ${FAKE}`,
      ],
      { cwd: project.root },
    );
    // The grid appears with the run's cells: 2 configs × 2 questions × 1 repeat.
    await page.waitForSelector('.exp-grid[data-pipeline="experiments"] .exp-cell[data-state="running"]', { timeout: 60_000 });
    expect(await page.locator('.exp-grid .exp-cell').count()).toBe(4);
    // A running cell moves on by itself: its fraction rises and its phase and agents show.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.exp-cell[data-state="running"] [role=progressbar]')].some(
        (b) => Number(b.getAttribute('aria-valuenow')) >= 25,
      ),
    );
    await page.waitForSelector('.exp-cell[data-state="running"] .exp-agents .chip');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.exp-cell[data-state="running"] .exp-phase')].some((p) =>
        /initial_answer|enforcement/.test(p.textContent ?? ''),
      ),
    );
    await shot('experiments-grid-running');

    // Its live link opens the run's page: the agents' output grows while MassGen writes it.
    const live = page.locator('.exp-cell[data-state="running"] a.exp-live').first();
    await live.waitFor();
    const href = (await live.getAttribute('href')) as string;
    expect(decodeURIComponent(href)).toMatch(/^#\/massgen\/live\/\.massgen\/massgen_logs\/log_\d{8}_\d{6}_\d{6}$/);
    await live.click();
    await page.waitForSelector('pre.agent-output[data-file="agent_a.txt"]');
    await page.waitForSelector('.live-agents tbody tr[data-agent="agent_b"]');
    const length = (): Promise<number> =>
      page.evaluate(() => document.querySelector('pre.agent-output[data-file="agent_a.txt"]')?.textContent?.length ?? 0);
    await page.waitForFunction(() => (document.querySelector('pre.agent-output[data-file="agent_a.txt"]')?.textContent?.length ?? 0) > 0);
    const before = await length();
    await page.waitForFunction(
      (n) => (document.querySelector('pre.agent-output[data-file="agent_a.txt"]')?.textContent?.length ?? 0) > n,
      before,
    );
    expect(await page.textContent('.live-phase')).toMatch(/initial_answer|enforcement/);
    await shot('experiments-live-run');

    // The hostile question's cells: its text reaches the agents' output, shown as text.
    await go('#/massgen');
    const hostileCell = page.locator(`.exp-table tbody tr:first-child td:nth-child(3) .exp-cell a.exp-live`);
    await hostileCell.waitFor({ timeout: 60_000 });
    await hostileCell.click();
    await page.waitForFunction(
      (needle) => document.querySelector('pre.agent-output[data-file="agent_a.txt"]')?.textContent?.includes(needle) ?? false,
      HOSTILE,
    );
    expect(await page.$('pre.agent-output img')).toBeNull();
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();

    // Once the run ends every cell says its winner and links to its report.
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    await go('#/massgen');
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.exp-cell[data-state="up-to-date"] .exp-winner').length === 4 &&
        document.querySelectorAll('.exp-cell a.exp-report').length === 4,
    );
    expect(await page.locator('.exp-winner').allTextContents()).toEqual(['agent_b', 'agent_b', 'agent_b', 'agent_b']);
    await shot('experiments-grid-done');
    await page.locator('.exp-cell a.exp-report').first().click();
    await page.waitForSelector('h1:text-matches("log_\\\\d+_\\\\d+_\\\\d+ · turn 1")');
    // The report is the cell's analysis (the pipeline writes it beside experiment.json, not into MassGen's log).
    await page.waitForSelector('.page-head:has-text("winner agent_b")');
    await go('#/massgen');
    await page.waitForFunction(() => document.querySelectorAll('table.sessions tbody tr').length === 4);
    expect(await page.locator('table.sessions').textContent()).not.toContain('not analyzed');
    // The stage link names the cell's stage, hostile question and all.
    await go('#/massgen');
    await page.locator('.exp-table tbody tr:first-child td:nth-child(3) a.exp-stage').first().click();
    await page.waitForFunction(() =>
      decodeURIComponent(location.hash).startsWith('#/pipelines/experiments/stage/run[configs/a.yaml, Is <img'),
    );
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(problems).toEqual([]);
  }, 180_000);

  it('experiments-ui - the live API serves only agent outputs of a logs folder, redacted', async () => {
    const sessions = JSON.parse((await ui.request('/api/massgen/sessions', { auth: true })).body) as { rows: Array<{ dir: string }> };
    const dir = sessions.rows[0]?.dir as string;
    const view = JSON.parse((await ui.request(`/api/massgen/live?dir=${encodeURIComponent(dir)}`, { auth: true })).body);
    expect(view.outputs.map((o: { file: string }) => o.file)).toContain('agent_a.txt');
    // A key an agent printed is redacted; the file's other lines are whole.
    const secretFile = project.path(`${view.attemptDir}/agent_outputs/agent_a.txt`);
    appendFileSync(secretFile, 'calling with OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD\n');
    const piece = JSON.parse(
      (await ui.request(`/api/massgen/live/output?dir=${encodeURIComponent(view.attemptDir)}&file=agent_a.txt`, { auth: true })).body,
    );
    expect(piece.text).toContain('calling with OPENAI_API_KEY=');
    expect(piece.text).not.toContain('sk-proj-abcdefghijklmnop');
    // Outside a logs folder, a path that climbs out, a file not among the outputs, a symlink: not found.
    symlinkSync(project.path('configs/a.yaml'), project.path(`${view.attemptDir}/agent_outputs/link.txt`));
    for (const [d, f] of [
      ['configs', 'a.yaml'],
      [`${view.attemptDir}/..`, 'agent_a.txt'],
      [view.attemptDir, '../status.json'],
      [view.attemptDir, 'link.txt'],
      [view.attemptDir, '.hidden.txt'],
    ]) {
      const answer = await ui.request(
        `/api/massgen/live/output?dir=${encodeURIComponent(d as string)}&file=${encodeURIComponent(f as string)}`,
        {
          auth: true,
        },
      );
      expect(answer.status, `${d} ${f}`).toBe(404);
    }
    expect((await ui.request(`/api/massgen/live?dir=${encodeURIComponent('configs')}`, { auth: true })).status).toBe(404);
  });
});
