// The dashboard in headless chromium (Debian's, through playwright-core):
//  1. time to first render of the MassGen page over 1,000 generated runs (all analyzed),
//  2. time to first render of a 10,000-stage pipeline page (bench/graph's generated DAG),
//  3. event-to-pixel latency during `refinery watch --ui`: from a stage event's time (the bus emits it)
//     to the animation frame after the page changed that stage's box.
// Targets: 1 and 2 under 1.5 s, 3 p50 under 200 ms. First render = navigation start to the table's
// first rows (and, for the pipeline, the graph) on the screen; each is measured cold (a fresh server,
// nothing of the page cached by the browser) and then warm (the median of 5 reloads).
// Usage: npx tsx bench/ui/run.ts [--runs 1000] [--stages 10000] [--changes 10] [--chromium /usr/bin/chromium]
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../dev/headless-chromium.ts';
import { generateLogs } from '../../dev/massgen-gen/generate.ts';
import { listSessions, listTurnUnits, reportDirOf } from '../../src/workflows/massgen/discover.ts';
import { analyzeTurnUnit } from '../../src/workflows/massgen/analyze.ts';
import { makeDag, refineryPipeline, writeSources } from '../graph/generate.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WORK = path.join(REPO, 'bench', '.work', 'ui');
const CLI = path.join(REPO, 'bin', 'refinery.js');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    stages: { type: 'string', default: '10000' },
    changes: { type: 'string', default: '10' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
const RUNS = Number(values.runs);
const STAGES = Number(values.stages);
const CHANGES = Number(values.changes);

function project(name: string): string {
  const root = path.join(WORK, name);
  mkdirSync(path.join(root, 'node_modules'), { recursive: true });
  writeFileSync(path.join(root, 'package.json'), '{ "type": "module", "private": true }\n');
  if (!existsSync(path.join(root, 'node_modules', 'refinery'))) symlinkSync(REPO, path.join(root, 'node_modules', 'refinery'), 'dir');
  return root;
}

/** 1,000 MassGen runs: the generator's scenarios under successive seeds, every turn analyzed. Kept between runs of the bench. */
async function massgenProject(): Promise<string> {
  const root = project('massgen');
  const logs = path.join(root, 'logs');
  const done = path.join(root, `.ready-${RUNS}`);
  if (existsSync(done)) return root;
  rmSync(logs, { recursive: true, force: true });
  const started = performance.now();
  for (let seed = 1; (await listSessions(logs)).length < RUNS; seed += 1) generateLogs({ outDir: logs, seed });
  const sessions = await listSessions(logs);
  for (const extra of sessions.slice(RUNS)) rmSync(extra, { recursive: true, force: true });
  const units = await listTurnUnits(logs);
  for (const unit of units) {
    const { analysis, report } = await analyzeTurnUnit(unit, { staleAfterSeconds: 120 });
    writeFileSync(path.join(reportDirOf(unit), 'analysis.json'), `${JSON.stringify(analysis, null, 2)}\n`);
    writeFileSync(path.join(reportDirOf(unit), 'ANALYSIS_REPORT.md'), report);
  }
  writeFileSync(done, '');
  process.stdout.write(
    `generated and analyzed ${RUNS} MassGen runs (${units.length} turns) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return root;
}

function graphProject(): string {
  const root = project(`graph-${STAGES}`);
  // No parse cache: the cold page parses the 10,000-stage file as a first `refinery run` would.
  rmSync(path.join(root, '.refinery'), { recursive: true, force: true });
  const dag = makeDag(STAGES);
  writeSources(root, dag);
  mkdirSync(path.join(root, 'pipelines'), { recursive: true });
  writeFileSync(path.join(root, 'pipelines', 'graph.yaml'), refineryPipeline(dag, 'run'));
  return root;
}

interface Server {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function serve(root: string, args: string[], urlOn: 'stdout' | 'stderr' = 'stdout'): Promise<Server> {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', CI: 'true' },
  });
  return new Promise((resolve, reject) => {
    let text = '';
    let errors = '';
    const look = (d: Buffer, stream: 'stdout' | 'stderr'): void => {
      if (stream === 'stderr') errors += d.toString();
      if (stream !== urlOn) return;
      text += d.toString();
      const m = /(http:\/\/\S+\/\?token=\S+)/.exec(text);
      if (m) {
        resolve({
          url: m[1] as string,
          child,
          stop: () =>
            new Promise((r) => {
              child.on('close', () => r());
              child.kill('SIGINT');
            }),
        });
      }
    };
    child.stdout.on('data', (d: Buffer) => look(d, 'stdout'));
    child.stderr.on('data', (d: Buffer) => look(d, 'stderr'));
    child.on('close', (code) => reject(new Error(`refinery exited with ${code}: ${errors}`)));
  });
}

/** Milliseconds from navigation start until every selector is on the page (the next frame painted). */
async function firstRender(page: Page, url: string, selectors: string[]): Promise<number> {
  await page.goto('about:blank');
  const started = Date.now();
  await page.goto(url);
  for (const s of selectors) await page.waitForSelector(s, { timeout: 60_000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(undefined))));
  return Date.now() - started;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

async function measurePage(
  browser: Browser,
  root: string,
  args: string[],
  route: string,
  selectors: string[],
): Promise<{ cold: number; warm: number }> {
  const server = await serve(root, args);
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // Chromium starts a renderer process for the origin on its first visit: done here, on a file that
    // touches none of the server's caches, so "cold" measures a cold dashboard, not a cold browser.
    await page.goto(`${new URL(server.url).origin}/vendor/marked.umd.js?token=${new URL(server.url).searchParams.get('token')}`);
    // The cookie the first page would set: every measured load is a plain visit of the route.
    await context.addCookies([
      {
        name: `refinery-ui-${new URL(server.url).port}`,
        value: new URL(server.url).searchParams.get('token') as string,
        url: new URL(server.url).origin,
      },
    ]);
    const target = `${new URL(server.url).origin}/${route}`;
    const cold = await firstRender(page, target, selectors);
    const warm: number[] = [];
    for (let i = 0; i < 5; i += 1) warm.push(await firstRender(page, target, selectors));
    await context.close();
    return { cold, warm: median(warm) };
  } finally {
    await server.stop();
  }
}

const WATCH_PIPELINE = (n: number): string =>
  `${[
    'pipeline: live',
    'stages:',
    ...Array.from(
      { length: n },
      (_, i) => `  s${i}: { run: "cat src/f${i}.txt > \${outputs.o}", inputs: [src/f${i}.txt], outputs: { o: out/f${i}.txt } }`,
    ),
  ].join('\n')}\n`;

async function eventToPixel(browser: Browser): Promise<number[]> {
  const root = project('watch');
  const n = 20;
  rmSync(path.join(root, '.refinery'), { recursive: true, force: true });
  rmSync(path.join(root, 'out'), { recursive: true, force: true });
  mkdirSync(path.join(root, 'pipelines'), { recursive: true });
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(root, 'pipelines', 'live.yaml'), WATCH_PIPELINE(n));
  for (let i = 0; i < n; i += 1) writeFileSync(path.join(root, 'src', `f${i}.txt`), 'v0\n');
  const server = await serve(root, ['watch', 'live', '--ui', '--no-mqtt', '--json'], 'stderr');
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(server.url);
    await page.evaluate(() => {
      location.hash = '#/pipelines/live';
    });
    await page.waitForFunction((count) => document.querySelectorAll('.dag .node[data-state="up-to-date"]').length === count, n, {
      timeout: 60_000,
    });
    // Every change of a box's state, stamped at the next animation frame (when it is on the screen).
    await page.evaluate(() => {
      const w = window as unknown as { changes: Array<{ stage: string; state: string; at: number }> };
      w.changes = [];
      new MutationObserver((records) => {
        const batch = records
          .filter((r) => r.attributeName === 'data-state')
          .map((r) => ({
            stage: (r.target as Element).getAttribute('data-id') as string,
            state: (r.target as Element).getAttribute('data-state') as string,
          }));
        requestAnimationFrame(() => {
          const at = performance.timeOrigin + performance.now();
          for (const b of batch) w.changes.push({ ...b, at });
        });
      }).observe(document.querySelector('#view') as Element, { subtree: true, attributes: true, attributeFilter: ['data-state'] });
    });
    const runsBefore = new Set(readdirSync(path.join(root, '.refinery', 'runs')));
    for (let round = 1; round <= CHANGES; round += 1) {
      for (let i = 0; i < n; i += 1) writeFileSync(path.join(root, 'src', `f${i}.txt`), `v${round}\n`);
      await page.waitForFunction((want) => (window as unknown as { changes: unknown[] }).changes.length >= want, round * n * 2, {
        timeout: 60_000,
      });
    }
    const changes = await page.evaluate(
      () => (window as unknown as { changes: Array<{ stage: string; state: string; at: number }> }).changes,
    );
    await page.close();
    // The events of the runs the changes caused, in order, per stage.
    const events: Array<{ stage: string; type: string; time: number }> = [];
    for (const run of readdirSync(path.join(root, '.refinery', 'runs')).sort()) {
      if (runsBefore.has(run)) continue;
      for (const line of readFileSync(path.join(root, '.refinery', 'runs', run, 'events.jsonl'), 'utf8').split('\n')) {
        if (!line) continue;
        const e = JSON.parse(line) as { type: string; stage?: string; time: string };
        if ((e.type === 'stage-start' || e.type === 'stage-end') && e.stage)
          events.push({ stage: e.stage, type: e.type, time: Date.parse(e.time) });
      }
    }
    const latencies: number[] = [];
    for (let i = 0; i < n; i += 1) {
      const stage = `s${i}`;
      const ev = events.filter((e) => e.stage === stage);
      const px = changes.filter((c) => c.stage === stage);
      for (let k = 0; k < Math.min(ev.length, px.length); k += 1)
        latencies.push((px[k] as { at: number }).at - (ev[k] as { time: number }).time);
    }
    return latencies;
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  mkdirSync(WORK, { recursive: true });
  const massgen = await massgenProject();
  const graph = graphProject();
  const browser = await launchChromium(values.chromium);
  try {
    const mg = await measurePage(browser, massgen, ['ui', '--logs-dir', 'logs'], '#/massgen', ['#view table.sessions tbody tr']);
    process.stdout.write(`MassGen page, ${RUNS} runs: first render ${mg.cold} ms cold, ${mg.warm} ms warm (target < 1500 ms)\n`);
    const charts = await measurePage(browser, massgen, ['ui', '--logs-dir', 'logs'], '#/massgen', [
      '#view table.sessions tbody tr',
      '#view .chart canvas',
    ]);
    process.stdout.write(`  with the charts across all ${RUNS} runs: ${charts.cold} ms cold, ${charts.warm} ms warm\n`);
    const pl = await measurePage(browser, graph, ['ui'], '#/pipelines/graph', ['#view .dag .node', '#view table.stages tbody tr']);
    process.stdout.write(`Pipeline page, ${STAGES} stages: first render ${pl.cold} ms cold, ${pl.warm} ms warm (target < 1500 ms)\n`);
    const latencies = await eventToPixel(browser);
    process.stdout.write(
      `Event to pixel during refinery watch --ui, ${latencies.length} stage state changes: p50 ${percentile(latencies, 50).toFixed(0)} ms, p95 ${percentile(latencies, 95).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms (target p50 < 200 ms)\n`,
    );
  } finally {
    await browser.close();
  }
}

await main();
