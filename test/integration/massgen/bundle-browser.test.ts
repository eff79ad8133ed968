// `refinery logs bundle` opened in a real browser (Debian chromium through playwright-core): no
// console error, every Mermaid block of the report drawn as SVG, every answer, vote and timeline
// event shown, no request leaving the file, and log text that looks like HTML shown as text.
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BundleData } from '../../../src/workflows/massgen/bundle-data.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { CHROMIUM, launchBrowser } from '../ui/browser.ts';

const LOGS = '.massgen/massgen_logs';
const HOSTILE =
  '<img src="http://x.test/pwn.png" onerror="window.__pwned = 1"><script>window.__pwned = 2</script> [link](javascript:window.__pwned=3)';

let browser: Browser | undefined;
let project: TempProject | undefined;
afterEach(() => project?.cleanup());
afterAll(async () => browser?.close());

interface Opened {
  errors: string[];
  leaving: string[];
  svgs: number;
  shown: { answers: number; votes: number; timeline: number; pwned: unknown; answerText: string };
}

async function open(file: string): Promise<Opened> {
  const page = await (browser as Browser).newPage();
  const errors: string[] = [];
  const leaving: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) await route.continue();
    else {
      leaving.push(url);
      await route.abort();
    }
  });
  await page.goto(`file://${file}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60_000 });
  const svgs = await page.locator('.mermaid > svg').count();
  // A string, evaluated in the page (this project's TypeScript has no DOM types).
  const shown = (await page.evaluate(`({
    answers: document.querySelectorAll('#answers article').length,
    votes: document.querySelectorAll('#votes table:first-of-type tbody tr').length,
    timeline: document.querySelectorAll('#timeline tbody tr').length,
    pwned: window.__pwned,
    answerText: Array.from(document.querySelectorAll('#answers pre')).map((p) => p.textContent || '').join('\\n'),
  })`)) as Opened['shown'];
  await page.close();
  return { errors, leaving, svgs, shown };
}

function bundleData(html: string): BundleData {
  return JSON.parse(/<script type="application\/json" id="bundle-data">([^<]*)<\/script>/.exec(html)?.[1] as string) as BundleData;
}

describe.skipIf(skipWithout(CHROMIUM))('refinery logs bundle in a browser', () => {
  beforeAll(async () => {
    browser = await launchBrowser();
  }, 60_000);

  it("bundle - opens with no network: no console error, the report's Mermaid drawn as SVG, every answer, vote and event shown, log HTML shown as text", async () => {
    project = tempProject();
    cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), project.path(LOGS), { recursive: true, verbatimSymlinks: true });
    const session = 'log_20251201_091040_312100';
    const agentDir = project.path(path.join(LOGS, session, 'turn_1/attempt_1/agent_b'));
    const snapshot = readdirSync(agentDir)
      .sort()
      .find((d) => readdirSync(path.join(agentDir, d)).includes('answer.txt')) as string;
    writeFileSync(path.join(agentDir, snapshot, 'answer.txt'), `An answer that holds markup: ${HOSTILE}\n`);
    for (const [run, args] of [
      [session, []],
      ['log_20251201_093050_370528', ['--turn', '1']],
    ] as const) {
      const out = project.path(`${run}.html`);
      const made = await runCli(['logs', 'bundle', run, ...args, '--out', out], { cwd: project.root });
      expect(made.code, made.stderr).toBe(0);
      const data = bundleData(readFileSync(out, 'utf8'));
      const opened = await open(out);
      expect(opened.errors).toEqual([]);
      expect(opened.leaving).toEqual([]);
      expect(opened.svgs).toBe((data.report.match(/^```mermaid$/gm) ?? []).length);
      expect(opened.svgs).toBeGreaterThanOrEqual(2);
      expect(opened.shown.answers).toBe(data.answers.length);
      expect(opened.shown.votes).toBe(data.votes.length);
      expect(opened.shown.timeline).toBe(data.timeline.length);
      expect(data.answers.length).toBeGreaterThan(0);
      expect(data.votes.length).toBeGreaterThan(0);
      expect(opened.shown.pwned).toBeUndefined();
      if (run === session) expect(opened.shown.answerText).toContain(HOSTILE);
    }
  }, 120_000);
});
