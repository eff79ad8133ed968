// Driving the dashboard in Debian's chromium through playwright-core (no downloaded browser), and
// the projects the browser tests open: the bundled examples, analyzed and refined.
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../../dev/headless-chromium.ts';
import { expect } from 'vitest';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS } from '../../helpers/refine-example.ts';
import { systemTool, toolPath } from '../../helpers/system-tools.ts';
import type { UiProcess } from './ui-process.ts';

export const CHROMIUM = systemTool('chromium');

/** Screenshots of the browser tests (the test output folder; ignored by git). */
export const SHOTS_DIR = path.join(REPO_ROOT, 'test-results', 'ui');

export function launchBrowser(): Promise<Browser> {
  return launchChromium(toolPath(CHROMIUM));
}

export interface OpenPage {
  page: Page;
  /** Console errors and warnings, uncaught exceptions, failed requests. */
  problems: string[];
  /** Goes to a route (`#/massgen`) and waits until the shell is ready. */
  go(route: string): Promise<void>;
  shot(name: string): Promise<void>;
}

export async function openDashboard(
  browser: Browser,
  ui: UiProcess,
  viewport = { width: 1280, height: 900 },
  initScript?: string,
): Promise<OpenPage> {
  const context = await browser.newContext({ viewport });
  // Runs in every page before its own scripts (e.g. to keep hold of the uPlot charts the page makes).
  if (initScript) await context.addInitScript(initScript);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('requestfailed', (r) => {
    // A stream closed by navigation is not a failure.
    if (!r.url().includes('/api/events')) problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  await page.goto(ui.url);
  await page.waitForSelector('html[data-ready=true]');
  mkdirSync(SHOTS_DIR, { recursive: true });
  return {
    page,
    problems,
    async go(route: string) {
      await page.evaluate((r) => {
        location.hash = r;
      }, route);
      await page.waitForFunction((r) => location.hash === r || decodeURIComponent(location.hash) === decodeURIComponent(r), route);
    },
    async shot(name: string) {
      await page.screenshot({ path: path.join(SHOTS_DIR, `${name}.png`), fullPage: true });
    },
  };
}

/** A project with the bundled examples (MassGen logs and the offline refine example), analyzed and refined. */
export async function examplesProject(): Promise<TempProject> {
  const project = tempProject();
  for (const rel of [
    'refinery.config.yaml',
    'pipelines/analyze.yaml',
    'pipelines/refine.yaml',
    'examples/refine',
    'examples/massgen_logs',
  ]) {
    cpSync(path.join(REPO_ROOT, rel), project.path(rel), { recursive: true });
  }
  return project;
}

export async function analyzeAndRefine(project: TempProject): Promise<void> {
  const analyze = await runCli(['run', 'analyze', '--param', 'logs=examples/massgen_logs'], { cwd: project.root });
  expect(analyze.code, analyze.stderr).toBe(0);
  const refine = await runCli(['run', 'refine', ...EXAMPLE_REFINE_PARAMS], { cwd: project.root });
  expect(refine.code, refine.stderr).toBe(0);
}

/** A route with its parts encoded, as the page builds them. */
export function route(...parts: string[]): string {
  return `#/${parts.map(encodeURIComponent).join('/')}`;
}
