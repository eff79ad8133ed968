// Screenshots of the dashboard for the README (docs/images/ui-*.png): the bundled examples are
// copied to a temp project, analyzed and refined, then `refinery ui` is opened in Debian's chromium.
//   npx tsx scripts/ui-screenshots.ts [--out docs/images]      (just screenshots)
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { launchChromium } from '../dev/headless-chromium.ts';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';

const CLI = path.join(PACKAGE_ROOT, 'bin', 'refinery.js');
const { values } = parseArgs({
  options: {
    out: { type: 'string', default: path.join(PACKAGE_ROOT, 'docs', 'images') },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
  },
});
const out = path.resolve(values.out as string);
const TURN = 'examples/massgen_logs/log_20251201_091040_312100/turn_1';

function cli(root: string, args: string[]): void {
  execFileSync(process.execPath, [CLI, ...args], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NO_COLOR: '1', CI: 'true' },
  });
}

const temp = mkdtempSync(path.join(os.tmpdir(), 'refinery-screenshots-'));
const root = path.join(temp, 'my-project');
mkdirSync(root);
writeFileSync(path.join(root, 'package.json'), '{ "type": "module", "private": true }\n');
for (const rel of ['refinery.config.yaml', 'pipelines/analyze.yaml', 'pipelines/refine.yaml', 'examples/refine', 'examples/massgen_logs'])
  cpSync(path.join(PACKAGE_ROOT, rel), path.join(root, rel), { recursive: true });
cli(root, ['run', 'analyze', '--param', 'logs=examples/massgen_logs']);
cli(root, [
  'run',
  'refine',
  '--param',
  'task_file=examples/refine/task.md',
  '--param',
  'deliverable=examples/refine/deliverable/README.md,examples/refine/deliverable/slugify.mjs',
  '--param',
  'previous=examples/refine/previous/README.md',
  '--param',
  'writer=example-writer',
  '--param',
  'judges=example-judge-a,example-judge-b,example-judge-c',
  '--param',
  'guard=example-judge-b',
]);

const server = spawn(process.execPath, [CLI, 'ui'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise<string>((resolve, reject) => {
  let text = '';
  server.stdout.on('data', (d: Buffer) => {
    text += d.toString();
    const m = /(http:\/\/\S+\/\?token=\S+)/.exec(text);
    if (m) resolve(m[1] as string);
  });
  server.on('close', (code) => reject(new Error(`refinery ui exited with ${code}`)));
});

const browser = await launchChromium(values.chromium);
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 760 } });
  await page.goto(url);
  await page.waitForSelector('html[data-ready=true]');
  const shots: Array<[string, string, string]> = [
    ['ui-pipeline', '#/pipelines/refine', '#view .assess:text("checked at")'],
    ['ui-massgen', '#/massgen', '#view .chart canvas'],
    ['ui-turn-timeline', `#/massgen/turn/${encodeURIComponent(TURN)}?tab=timeline`, '#view svg.swimlane'],
    ['ui-refine', '#/refine/example', '#view .chart canvas'],
  ];
  mkdirSync(out, { recursive: true });
  for (const [name, route, ready] of shots) {
    await page.evaluate((r) => {
      location.hash = r;
    }, route);
    await page.waitForSelector(ready);
    await page.waitForTimeout(300);
    const file = path.join(out, `${name}.png`);
    await page.screenshot({ path: file });
    process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
  }
} finally {
  await browser.close();
  server.kill('SIGINT');
  await new Promise((r) => server.on('close', r));
  rmSync(temp, { recursive: true, force: true });
}
