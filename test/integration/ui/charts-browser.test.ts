// The dashboard's charts and the refine page, measured in a real browser (Debian's chromium through
// playwright-core) on the bundled examples: time-axis labels never overlap, the MassGen timeline's axis
// ticks are distinct, the refine page shows the deliverable beside its scores, and the per-judge chart
// draws bars per criterion, not lines across them. Screenshots go to test-results/ui/.
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { analyzeAndRefine, CHROMIUM, examplesProject, launchBrowser, openDashboard, route } from './browser.ts';
import { UiProcess } from './ui-process.ts';

/** Keeps every uPlot chart the page makes in window.__plots (uPlot's script assigns window.uPlot). */
const KEEP_PLOTS = `(() => {
  let wrapped;
  Object.defineProperty(window, 'uPlot', {
    configurable: true,
    get() { return wrapped; },
    set(real) {
      wrapped = function (...args) { const plot = new real(...args); (window.__plots ??= []).push(plot); return plot; };
      Object.assign(wrapped, real);
      wrapped.prototype = real.prototype;
    },
  });
})();`;

interface AxisLabel {
  chart: string;
  /** The canvas width, in the same (device) pixels as left and right. */
  width: number;
  text: string;
  left: number;
  right: number;
}

/** Each uPlot chart's x-axis tick labels with their horizontal extent on the canvas, in drawing order. */
function xAxisLabels(page: Page): Promise<AxisLabel[][]> {
  return page.evaluate(() => {
    type Plot = {
      root: HTMLElement;
      ctx: CanvasRenderingContext2D;
      axes: Array<{ _splits: number[] | null; _values: string[] | null; font: [string, number, number] }>;
      valToPos(v: number, scale: string, canvasPixels?: boolean): number;
    };
    const plots = ((window as unknown as { __plots?: Plot[] }).__plots ?? []).filter((p) => p.root.isConnected);
    return plots.map((p) => {
      const axis = p.axes[0];
      if (!axis?._splits || !axis._values) return [];
      p.ctx.save();
      p.ctx.font = axis.font[0];
      const out = axis._splits
        .map((split, i) => {
          const text = String(axis._values?.[i] ?? '');
          const width = p.ctx.measureText(text).width;
          const center = p.valToPos(split, 'x', true);
          return {
            chart: p.root.closest('[data-chart]')?.getAttribute('data-chart') ?? '?',
            width: p.ctx.canvas.width,
            text,
            left: center - width / 2,
            right: center + width / 2,
          };
        })
        .filter((l) => l.text !== '');
      p.ctx.restore();
      return out;
    });
  });
}

describe.skipIf(skipWithout(CHROMIUM))('dashboard charts and the refine page in a browser', () => {
  let project: TempProject;
  let ui: UiProcess;
  let browser: Browser;

  beforeAll(async () => {
    project = await examplesProject();
    // Two example logs once more, a day earlier: 8 turns on the charts across runs, so close together
    // that whole-number ticks one turn apart would crowd their date labels.
    const logs = project.path('examples/massgen_logs');
    for (const log of ['log_20251201_090025_578526', 'log_20251201_091040_312100'])
      cpSync(path.join(logs, log), path.join(logs, log.replace('log_20251201_09', 'log_20251130_06')), { recursive: true });
    await analyzeAndRefine(project);
    ui = new UiProcess(['ui'], project.root);
    [browser] = await Promise.all([launchBrowser(), ui.ready]);
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    project?.cleanup();
  });

  it('charts - the cross-run charts label their time axis without overlapping labels, at any chart width', async () => {
    // A narrow window makes the charts as tight as they get.
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 700, height: 900 },
    ]) {
      const { go, page, problems, shot } = await openDashboard(browser, ui, viewport, KEEP_PLOTS);
      await go('#/massgen');
      await page.waitForSelector('#view .chart canvas');
      await page.waitForFunction(() => ((window as unknown as { __plots?: unknown[] }).__plots ?? []).length >= 3);
      const charts = await xAxisLabels(page);
      expect(charts.length).toBeGreaterThanOrEqual(3);
      for (const labels of charts) {
        expect(labels.length, JSON.stringify(labels)).toBeGreaterThanOrEqual(2);
        // Dates: "12-01 09:00:25"; each label whole and apart from the next.
        for (let i = 1; i < labels.length; i++) {
          const [a, b] = [labels[i - 1] as AxisLabel, labels[i] as AxisLabel];
          expect(b.left, `${a.chart}: '${a.text}' and '${b.text}' overlap`).toBeGreaterThan(a.right);
        }
        for (const l of labels) {
          expect(l.text).toMatch(/^\d\d-\d\d \d\d:\d\d/);
          expect(l.left, `${l.chart}: '${l.text}' is cut by the left edge`).toBeGreaterThanOrEqual(0);
          expect(l.right, `${l.chart}: '${l.text}' is cut by the right edge`).toBeLessThanOrEqual(l.width);
        }
      }
      await shot(`massgen-charts-${viewport.width}`);
      expect(problems).toEqual([]);
      await page.context().close();
    }
  });

  it('charts - the MassGen timeline (Mermaid gantt) of every example turn, a few seconds long or longer, has distinct axis ticks', async () => {
    const { go, page, problems } = await openDashboard(browser, ui);
    const turns = readdirSync(project.path('examples/massgen_logs'))
      .filter((d) => d.startsWith('log_20251201_'))
      .flatMap((log) =>
        readdirSync(project.path(`examples/massgen_logs/${log}`))
          .filter((t) => /^turn_\d+$/.test(t))
          .map((t) => `examples/massgen_logs/${log}/${t}`),
      )
      .filter((turn) => existsSync(project.path(`${turn}/ANALYSIS_REPORT.md`)))
      .filter((turn) => readFileSync(project.path(`${turn}/ANALYSIS_REPORT.md`), 'utf8').includes('gantt'));
    expect(turns.length).toBeGreaterThanOrEqual(3);
    for (const turn of turns) {
      await go(route('massgen', 'turn', turn));
      await page.waitForSelector('#view .mermaid-box svg .grid .tick text');
      const ticks = await page.$$eval('#view .mermaid-box svg', (svgs) =>
        svgs
          .map((svg) => [...svg.querySelectorAll('.grid .tick text')].map((t) => t.textContent ?? ''))
          .filter((texts) => texts.length > 0),
      );
      expect(ticks.length, turn).toBe(1);
      const texts = ticks[0] as string[];
      expect(texts.length, turn).toBeGreaterThanOrEqual(2);
      expect(new Set(texts).size, `${turn}: ${texts.join(' ')}`).toBe(texts.length);
      await page
        .locator('#view .mermaid-box', { has: page.locator('.grid .tick') })
        .first()
        .screenshot({ path: `test-results/ui/gantt-axis-${turn.split('/').slice(-2).join('-')}.png` });
    }
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('refine page - the deliverable is shown beside the per-criterion scores, Markdown rendered and code as text', async () => {
    const { go, page, problems, shot } = await openDashboard(browser, ui);
    await go(route('refine', 'example'));
    await page.waitForSelector('#view .deliverable-file');
    const readme = readFileSync(project.path('examples/refine/deliverable/README.md'), 'utf8');
    const heading = /^#\s+(.+)$/m.exec(readme)?.[1] as string;
    const code = readFileSync(project.path('examples/refine/deliverable/slugify.mjs'), 'utf8');
    const firstLine = code.split('\n').find((l) => l.trim() !== '') as string;
    // Markdown is rendered (its heading is a heading), code is shown as text in a <pre>.
    await expect.poll(() => page.textContent('.deliverable-file[data-path$="README.md"] h1')).toBe(heading);
    expect(await page.textContent('.deliverable-file[data-path$="slugify.mjs"] pre')).toContain(firstLine.trim());
    expect(await page.isVisible('.deliverable-file[data-path$="README.md"] h1')).toBe(true);
    // Beside: the scores table on the left, the deliverable on its right, on the same rows of the page.
    const scores = await page.locator('.deliverable-scores').boundingBox();
    const files = await page.locator('.deliverable').boundingBox();
    expect(scores && files).toBeTruthy();
    if (!scores || !files) return;
    expect(files.x).toBeGreaterThanOrEqual(scores.x + scores.width);
    expect(files.y).toBeLessThan(scores.y + scores.height);
    const summary = JSON.parse(readFileSync(project.path('.refinery/sessions/example/summary.json'), 'utf8')) as {
      criteria: Array<{ id: string }>;
      rounds: Array<{ scores: Record<string, number> }>;
    };
    const rows = await page.$$eval('.deliverable-scores tbody tr', (trs) =>
      trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')),
    );
    expect(rows.map((r) => r[0]?.split(' ')[0])).toEqual(summary.criteria.map((c) => c.id));
    const last = summary.rounds.at(-1)?.scores ?? {};
    expect(rows.map((r) => r[1])).toEqual(summary.criteria.map((c) => String(last[c.id])));
    await shot('refine-deliverable');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('refine page - the per-judge chart draws a bar per judge and criterion, no line across criteria', async () => {
    const { go, page, problems, shot } = await openDashboard(browser, ui, undefined, KEEP_PLOTS);
    await go(route('refine', 'example'));
    await page.waitForSelector('#view [data-chart^="Round"]');
    const chart = page.locator('#view [data-chart^="Round"]');
    const session = JSON.parse(await (await ui.request('/api/refine/sessions/example', { auth: true })).body) as {
      criteria: { criteria: Array<{ id: string }> };
      rounds: Array<{ judges: Array<{ name: string; verdict: { scores: Record<string, number> } | null }> }>;
    };
    const judges = session.rounds.at(-1)?.judges.filter((j) => j.verdict) ?? [];
    const ids = session.criteria.criteria.map((c) => c.id);
    const bars = await chart.locator('.vbar').evaluateAll((els) =>
      els.map((e) => ({
        series: (e as HTMLElement).dataset.series,
        group: (e as HTMLElement).dataset.group,
        value: (e as HTMLElement).dataset.value,
      })),
    );
    expect(bars).toHaveLength(judges.length * ids.length);
    for (const j of judges)
      for (const id of ids) expect(bars).toContainEqual({ series: j.name, group: id, value: String(j.verdict?.scores[id]) });
    // No uPlot line chart stands for the per-judge scores.
    const titles = await page.evaluate(() =>
      ((window as unknown as { __plots?: Array<{ root: HTMLElement }> }).__plots ?? [])
        .filter((p) => p.root.isConnected)
        .map((p) => p.root.closest('[data-chart]')?.getAttribute('data-chart')),
    );
    expect(titles.some((t) => t?.includes("each judge's score"))).toBe(false);
    await chart.screenshot({ path: 'test-results/ui/refine-judges-chart.png' });
    await shot('refine-session-charts');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
