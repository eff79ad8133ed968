// Whatever agents write and logs hold is shown as text: an answer, a stage's log lines and a judge's
// critique (Markdown) carrying <script>, onerror= and javascript: links run nothing in the page.
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, type TempProject } from '../../helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS } from '../../helpers/refine-example.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { CHROMIUM, launchBrowser, openDashboard, route } from './browser.ts';
import { UiProcess } from './ui-process.ts';
import { tempProject } from '../../helpers/project.ts';

const SESSION = 'log_20251201_091040_312100';
const TURN = `logs/${SESSION}/turn_1`;
const ANSWER = `${TURN}/attempt_1/agent_a/20251201_091042_962413/answer.txt`;

const HOSTILE_ANSWER =
  'Tip 1 <script>window.__xss = "answer-script"</script> <img src=x onerror="window.__xss = \'answer-img\'"> </pre><svg onload="window.__xss=\'answer-svg\'">';
const HOSTILE_LOG = ['<img src=x onerror=window.__xss=1>', '<script>window.__xss=2</script>'];
const HOSTILE_MARKDOWN = `
<script>window.__xss = 'md-script'</script>

<img src="x" onerror="window.__xss = 'md-img'">

[click me](javascript:window.__xss='md-link')

<iframe src="javascript:window.__xss='md-iframe'"></iframe>

<a href="#" onclick="window.__xss='md-onclick'">styled</a>
`;

describe.skipIf(skipWithout(CHROMIUM))('dashboard renders hostile text as text', () => {
  let project: TempProject;
  let ui: UiProcess;
  let browser: Browser;

  beforeAll(async () => {
    project = tempProject({
      'pipelines/say.yaml': `pipeline: say\nstages:\n  hello: { run: "echo '${HOSTILE_LOG[0]}'; echo '${HOSTILE_LOG[1]}' >&2; echo ok > \${outputs.o}", outputs: { o: out/say.txt } }\n`,
    });
    for (const rel of ['refinery.config.yaml', 'pipelines/refine.yaml', 'examples/refine'])
      cpSync(path.join(REPO_ROOT, rel), project.path(rel), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'examples/massgen_logs', SESSION), project.path(`logs/${SESSION}`), { recursive: true });
    writeFileSync(project.path(ANSWER), HOSTILE_ANSWER);
    for (const args of [
      ['run', 'say'],
      ['run', 'refine', ...EXAMPLE_REFINE_PARAMS],
    ]) {
      const result = await runCli(args, { cwd: project.root });
      expect(result.code, result.stderr).toBe(0);
    }
    appendFileSync(project.path('.refinery/sessions/example/round_001/judges/example-judge-a/critique_packet.md'), HOSTILE_MARKDOWN);
    ui = new UiProcess(['ui', '--logs-dir', 'logs'], project.root);
    [browser] = await Promise.all([launchBrowser(), ui.ready]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await ui?.stop();
    project?.cleanup();
  });

  it('dashboard - an agent answer with <script> and onerror= is shown as its text', async () => {
    const { go, page, shot } = await openDashboard(browser, ui);
    await go(`${route('massgen', 'turn', TURN)}?tab=answers`);
    await page.waitForSelector('#view .answer[data-label="agent1.1"]');
    expect(await page.textContent('#view .answer[data-label="agent1.1"] .answer-text')).toBe(readFileSync(project.path(ANSWER), 'utf8'));
    expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
    expect(await page.$$('#view .answer script, #view .answer img, #view .answer svg')).toHaveLength(0);
    await shot('xss-answer');
  });

  it('dashboard - stage log lines with HTML are shown as text', async () => {
    const { go, page, shot } = await openDashboard(browser, ui);
    await go(route('pipelines', 'say', 'stage', 'hello'));
    await page.waitForSelector('#view pre.log');
    const log = (await page.textContent('#view pre.log')) as string;
    for (const line of HOSTILE_LOG) expect(log).toContain(line);
    expect(await page.$$('#view pre.log img, #view pre.log script')).toHaveLength(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
    await shot('xss-log');
  });

  it('dashboard - a critique in Markdown keeps its text and loses every script, handler and javascript: link', async () => {
    const { go, page, shot } = await openDashboard(browser, ui);
    await go(route('refine', 'example'));
    await page.waitForSelector('#view details.judge');
    for (const d of await page.$$('#view details.judge summary')) await d.click();
    await page.waitForSelector('#view details.judge .markdown');
    const markdown = page.locator('#view details.judge .markdown').first();
    expect(await markdown.textContent()).toContain('click me');
    expect(
      await page.$$(
        '#view .markdown script, #view .markdown iframe, #view .markdown [onerror], #view .markdown [onclick], #view .markdown a[href^="javascript"]',
      ),
    ).toHaveLength(0);
    // Clicking what was a javascript: link does nothing.
    await page.locator('#view .markdown a:text("click me")').first().click();
    expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
    await shot('xss-critique');
  });
});
