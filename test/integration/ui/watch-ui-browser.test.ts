// `refinery watch --ui` in a browser: writing an input turns its stage to running, then up to date,
// in the open pipeline page, from the watch's own events (no reload, no polling).
import { existsSync, rmSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { CHROMIUM, launchBrowser, openDashboard, route } from './browser.ts';
import { UiProcess } from './ui-process.ts';

// Stage a waits for the file `gate` before it finishes: the test holds it in the running state
// until it has seen that state in the page. The gate is no input, so creating it starts nothing.
const PIPELINE = `pipeline: live
stages:
  a:
    run: "while [ ! -e gate ]; do sleep 0.02; done; cat src/a.txt > \${outputs.o}"
    inputs: [src/a.txt]
    outputs: { o: out/a.txt }
  b: { run: "cat out/a.txt out/a.txt > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/b.txt } }
`;

describe.skipIf(skipWithout(CHROMIUM))('refinery watch --ui', () => {
  let project: TempProject;
  let ui: UiProcess;
  let browser: Browser;

  beforeAll(async () => {
    project = tempProject({ 'pipelines/live.yaml': PIPELINE, 'src/a.txt': 'one\n', gate: '' });
    ui = new UiProcess(['watch', 'live', '--ui', '--no-mqtt', '--json'], project.root, { urlOn: 'stderr' });
    [browser] = await Promise.all([launchBrowser(), ui.ready]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    // A stage still waiting for its gate would hold the watch's stop (it lets running stages finish).
    project?.write('gate', '');
    const exit = await ui?.stop();
    expect(exit?.code).toBe(0);
    project?.cleanup();
  });

  it('watch-ui - writing an input turns its stage running, then up to date, in the open page', async () => {
    const { go, page, problems, shot } = await openDashboard(browser, ui);
    await go(route('pipelines', 'live'));
    const node = (id: string, state: string): string => `.dag .node[data-id="${id}"][data-state="${state}"]`;
    // The first run at start brings everything up to date.
    await page.waitForSelector(node('b', 'up-to-date'));
    rmSync(project.path('gate'));
    project.write('src/a.txt', 'two\n');
    await page.waitForSelector(node('a', 'running'));
    // Only the changed stage runs; its downstream waits (its state may say stale meanwhile).
    expect(await page.$(node('b', 'running'))).toBeNull();
    await shot('watch-running');
    project.write('gate', '');
    await page.waitForSelector(node('a', 'up-to-date'));
    await page.waitForSelector(node('b', 'up-to-date'));
    // The table row followed too, and the file really changed.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('#view table.stages tbody tr')].every((r) => r.textContent?.includes('up-to-date')),
    );
    expect(existsSync(project.path('out/b.txt'))).toBe(true);
    await shot('watch-up-to-date');
    expect(problems).toEqual([]);
  });

  it('watch-ui - a lost stream shows a banner, comes back by itself and replays what it missed', async () => {
    const { go, page } = await openDashboard(browser, ui);
    await go(route('pipelines', 'live'));
    // Under a loaded machine the page's first plan check can take a while: wait for it, bounded.
    await page.waitForSelector('.dag .node[data-id="a"][data-state="up-to-date"]', { timeout: 90_000 });
    await page.evaluate(() => {
      const w = window as unknown as { seenA: string[] };
      w.seenA = [];
      new MutationObserver((records) => {
        for (const r of records)
          if ((r.target as Element).getAttribute('data-id') === 'a')
            w.seenA.push((r.target as Element).getAttribute('data-state') as string);
      }).observe(document.querySelector('#view') as Element, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
    });
    // The network drops: the stream and its reconnections fail until it is back.
    await page.route('**/api/events**', (r) => r.abort());
    await page.evaluate(() => (window as unknown as { refineryLive: { drop(): void } }).refineryLive.drop());
    await page.waitForSelector('#banner:not([hidden])');
    const ended = ui.nextEvent((m) => m.kind === 'run-event' && m.event.type === 'run-end', { since: Number.MAX_SAFE_INTEGER });
    project.write('src/a.txt', 'three\n');
    await ended;
    expect(await page.evaluate(() => (window as unknown as { seenA: string[] }).seenA)).toEqual([]);
    await page.unroute('**/api/events**');
    await page.waitForSelector('#banner[hidden]', { state: 'attached' });
    await page.waitForFunction(() => (window as unknown as { seenA: string[] }).seenA.join(',').endsWith('running,up-to-date'));
  }, 150_000);

  it('watch-ui - the dashboard is attached to the watch: its overview says so and the URL is printed once', async () => {
    const overview = JSON.parse((await ui.request('/api/overview', { auth: true })).body) as { mode: string; pipelines: string[] };
    expect(overview).toMatchObject({ mode: 'watch', pipelines: ['live'] });
    expect(ui.stderr.match(/dashboard at http/g)).toHaveLength(1);
  });
});
