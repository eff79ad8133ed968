// The dashboard in a real browser (Debian's chromium through playwright-core) on the bundled
// examples: every page loads without a console error; pipeline pages show every stage; a MassGen
// turn shows its report with Mermaid drawn as SVG, and its answer and vote browsers every answer and
// vote; a refine session shows its score chart. Screenshots go to test-results/ui/.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { analyzeAndRefine, CHROMIUM, examplesProject, launchBrowser, openDashboard, route } from './browser.ts';
import { UiProcess } from './ui-process.ts';

const TURN = 'examples/massgen_logs/log_20251201_091040_312100/turn_1';

describe.skipIf(skipWithout(CHROMIUM))('dashboard in a browser', () => {
  let project: TempProject;
  let ui: UiProcess;
  let browser: Browser;

  beforeAll(async () => {
    project = await examplesProject();
    await analyzeAndRefine(project);
    ui = new UiProcess(['ui'], project.root);
    [browser] = await Promise.all([launchBrowser(), ui.ready]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    project?.cleanup();
  });

  function planIds(pipeline: string, params: string[] = []): string[] {
    const out = execFileSync(process.execPath, [CLI, 'plan', pipeline, '--json', ...params], { cwd: project.root, encoding: 'utf8' });
    return (JSON.parse(out) as Array<{ id: string; decision: string }>).filter((e) => e.decision !== 'loop').map((e) => e.id);
  }

  it('dashboard - every page of the bundled examples loads with no console error', async () => {
    const { problems, go, page, shot } = await openDashboard(browser, ui);
    const runId = readdirSync(project.path('.refinery/runs')).sort()[0] as string;
    const pages: Array<[string, string]> = [
      ['#/', '.pipeline-card'],
      [route('pipelines', 'analyze'), '.dag .node'],
      [route('pipelines', 'refine'), '.dag .node'],
      [route('pipelines', 'analyze', 'stage', 'turn[log_20251201_091040_312100/turn_1]'), '.page-head .chip'],
      ['#/runs', 'table.runs'],
      [route('runs', runId), '.gantt-row'],
      ['#/massgen', 'table.sessions'],
      [route('massgen', 'turn', TURN), '.markdown'],
      [`${route('massgen', 'turn', TURN)}?tab=answers`, '.answer'],
      [`${route('massgen', 'turn', TURN)}?tab=votes`, 'table.vote-table'],
      [`${route('massgen', 'turn', TURN)}?tab=timeline`, 'svg.swimlane'],
      [`${route('massgen', 'turn', TURN)}?tab=errors`, '.bars'],
      ['#/refine', 'table.grid'],
      [route('refine', 'example'), '.chart canvas'],
      ['#/jobs', '.page h1'],
      ['#/help', 'kbd'],
    ];
    for (const [r, selector] of pages) {
      await go(r);
      await page.waitForSelector(`#view ${selector}`);
      await shot(`page-${r.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
    }
    // The charts across runs and the stale check come after the first paint: wait for them too.
    await go('#/massgen');
    await page.waitForSelector('#view .chart canvas');
    await go(route('pipelines', 'analyze'));
    await page.waitForSelector('#view .assess:text("checked at")');
    expect(problems).toEqual([]);
  });

  it('dashboard - a pipeline page shows every stage, in its graph and its table', async () => {
    const { go, page, shot } = await openDashboard(browser, ui);
    await go(route('pipelines', 'analyze'));
    await page.waitForSelector('#view table.stages');
    const ids = planIds('analyze', ['--param', 'logs=examples/massgen_logs']);
    expect(ids).toHaveLength(7);
    const rows = await page.$$eval('#view table.stages tbody tr td:first-child', (cells) => cells.map((c) => c.textContent));
    expect(rows.sort()).toEqual([...ids].sort());
    // The graph folds the six foreach instances into one box that counts them, before the summary.
    const boxesOfAnalyze = await page.$$eval('.dag .node', (nodes) =>
      nodes.map((n) => [
        n.getAttribute('data-id'),
        n.querySelector('.label')?.textContent,
        n.querySelector('.counts')?.textContent ?? null,
      ]),
    );
    expect(boxesOfAnalyze.map((b) => b[0]).sort()).toEqual(['summary', 'turn']);
    expect(boxesOfAnalyze).toContainEqual(['turn', 'turn', '×6']);
    await shot('pipeline-analyze');

    await go(route('pipelines', 'refine'));
    await page.waitForSelector('#view table.stages');
    const refineIds = planIds('refine', ['--param', 'judges=a', '--param', 'deliverable=x']);
    const boxes = await page.$$eval('.dag .node', (nodes) => nodes.map((n) => n.getAttribute('data-id')));
    expect(boxes.sort()).toEqual(['criteria', 'guard', 'rounds', 'summary']);
    const refineRows = await page.$$eval('#view table.stages tbody tr td:first-child', (cells) =>
      cells.map((c) => c.textContent as string),
    );
    for (const id of refineIds) expect(refineRows).toContain(id);
    // The loop's iterations the run reached are listed too.
    expect(refineRows).toContain('rounds#1.consensus');
    await shot('pipeline-refine');
  });

  it('dashboard - a MassGen turn shows its report with Mermaid as SVG, and every answer and vote', async () => {
    const { go, page, shot } = await openDashboard(browser, ui);
    const report = readFileSync(project.path(`${TURN}/ANALYSIS_REPORT.md`), 'utf8');
    const diagrams = report.split('```mermaid').length - 1;
    expect(diagrams).toBeGreaterThan(0);
    await go(route('massgen', 'turn', TURN));
    await page.waitForFunction((n) => document.querySelectorAll('#view .mermaid-box svg').length === n, diagrams);
    expect(await page.$$eval('#view .mermaid-box pre', (p) => p.length)).toBe(0);
    await shot('massgen-report');

    const analysis = JSON.parse(readFileSync(project.path(`${TURN}/analysis.json`), 'utf8')) as {
      answers: Array<{ label: string }>;
      votes: Array<{ voterId: string; votedFor: string; reason: string; superseded: boolean }>;
    };
    await go(`${route('massgen', 'turn', TURN)}?tab=answers`);
    await page.waitForSelector('#view .answer');
    const labels = await page.$$eval('#view .answer', (els) => els.map((e) => e.getAttribute('data-label')));
    expect(labels).toEqual(analysis.answers.map((a) => a.label));
    // The full text of each answer, from its snapshot.
    const first = readFileSync(project.path(`${TURN}/attempt_1/agent_a/20251201_091042_962413/answer.txt`), 'utf8');
    expect(await page.textContent('#view .answer[data-label="agent1.1"] .answer-text')).toBe(first);
    await shot('massgen-answers');

    await go(`${route('massgen', 'turn', TURN)}?tab=votes`);
    await page.waitForSelector('#view table.vote-table');
    const votes = await page.$$eval('#view table.vote-table tbody tr', (rows) =>
      rows.map((r) => ({ cells: [...r.querySelectorAll('td')].map((c) => c.textContent), superseded: r.classList.contains('superseded') })),
    );
    expect(votes).toHaveLength(analysis.votes.length);
    votes.forEach((v, i) => {
      const want = analysis.votes[i] as (typeof analysis.votes)[number];
      expect(v.cells[1]).toBe(want.voterId);
      expect(v.cells[2]).toContain(want.votedFor);
      expect(v.cells[3]).toBe(want.reason);
      expect(v.superseded).toBe(want.superseded);
    });
    await shot('massgen-votes');
  });

  it('dashboard - a refine session page shows the score chart and the judges matrix', async () => {
    const { go, page, shot } = await openDashboard(browser, ui);
    await go(route('refine', 'example'));
    await page.waitForSelector('#view .chart[data-chart^="Consensus score"] canvas');
    const legend = await page.$$eval('#view .chart[data-chart^="Consensus score"] .u-legend .u-series .u-label', (l) =>
      l.map((x) => x.textContent),
    );
    expect(legend).toEqual(['round', 'E1', 'E2', 'E3', 'E4', 'E5']);
    const summary = JSON.parse(readFileSync(project.path('.refinery/sessions/example/summary.json'), 'utf8')) as {
      rounds: Array<{ judges: Array<{ name: string; scores: Record<string, number> }> }>;
    };
    const judgeA = summary.rounds[0]?.judges.find((j) => j.name === 'example-judge-a');
    const row = await page.$$eval('#view table.matrix tbody tr:first-child td', (cells) => cells.map((c) => c.textContent));
    expect(row[0]).toBe(String(judgeA?.scores.E1));
    await shot('refine-session');
  });

  it('dashboard - the view is in the address: a reload shows the same filtered, sorted list', async () => {
    const { go, page } = await openDashboard(browser, ui);
    await go('#/massgen');
    await page.waitForSelector('#view table.sessions');
    await page.click('#view th.sortable:text("cost")');
    await page.waitForFunction(() => location.hash.includes('sort=cost'));
    await page.fill('#view input[type=search]', 'Python');
    await page.waitForFunction(() => location.hash.includes('q=Python'));
    await page.waitForFunction(() => document.querySelectorAll('#view table.sessions tbody tr').length === 1);
    await page.reload();
    await page.waitForSelector('#view table.sessions tbody tr');
    expect(await page.$$eval('#view table.sessions tbody tr', (r) => r.map((x) => x.getAttribute('data-session')))).toEqual([
      'log_20251201_091040_312100',
    ]);
    expect(await page.inputValue('#view input[type=search]')).toBe('Python');
    expect(path.basename(page.url())).toContain('sort=cost');
  });
});
