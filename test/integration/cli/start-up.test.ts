// What a no-op run loads before it answers: refinery's own start path and nothing heavy. ESM loads
// are listed by a module hook given through NODE_OPTIONS; CommonJS loads by NODE_DEBUG=module.
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const HEAVY = ['zod', 'ajv', 'ajv-formats', 'yaml', 'p-queue', 'mqtt', 'aedes', 'zx'];

const PACKAGE_PATH = /node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\//g;

/**
 * Packages named in the CLI's module loads (from node_modules/<name>/, scoped or not), and those
 * bundled into a loaded chunk of dist/bundle (esbuild heads each bundled file with a
 * `// node_modules/<name>/...` comment).
 */
function loadedPackages(stderr: string): Set<string> {
  const names = new Set<string>();
  for (const m of stderr.matchAll(PACKAGE_PATH)) names.add(m[1] as string);
  for (const m of stderr.matchAll(/^LOAD (file:\/\/\S*\/dist\/bundle\/\S+\.m?js)$/gm)) {
    const text = readFileSync(fileURLToPath(m[1] as string), 'utf8');
    for (const c of text.matchAll(/^\/\/ (node_modules\/\S+)$/gm))
      for (const p of (c[1] as string).matchAll(PACKAGE_PATH)) names.add(p[1] as string);
  }
  return names;
}

/** A two-stage project with a module-load hook that lists every module a run loads on stderr. */
function loadListingProject(): TempProject {
  return tempProject({
    'src/a.txt': 'a',
    'pipelines/p.yaml': `pipeline: p
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a } }
  b: { run: "cat out/a > \${outputs.o}", inputs: [out/a], outputs: { o: out/b } }
`,
    'list-loads.mjs': `import { register } from 'node:module';
register('./load-hook.mjs', import.meta.url);
`,
    'load-hook.mjs': `export async function load(url, context, next) {
  process._rawDebug('LOAD ' + url);
  return next(url, context);
}
`,
  });
}

describe('start-up', () => {
  it('start-up - a no-op run loads none of zod, ajv, yaml, p-queue, mqtt, aedes, zx', async () => {
    project = loadListingProject();
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    const env = { ...process.env, NODE_OPTIONS: `--import=${project.path('list-loads.mjs')}`, NODE_DEBUG: 'module' };
    const noop = await runCli(['run', 'p'], { cwd: project.root, env });
    expect(noop.code).toBe(0);
    expect(noop.stdout).toContain('up to date');
    // The listing works: refinery's own entry point is in it.
    expect(noop.stderr).toMatch(/LOAD file:\/\/.*\/bin\/refinery\.js/);
    const heavy = [...loadedPackages(noop.stderr)].filter((name) => HEAVY.includes(name));
    expect(heavy).toEqual([]);
  });

  it('start-up - a run that checks one changed file loads no yaml, zod or picomatch (no remote cache named, no glob input)', async () => {
    project = loadListingProject();
    expect((await runCli(['run', 'p'], { cwd: project.root })).code).toBe(0);
    project.write('src/a.txt', 'a2');
    const env = { ...process.env, NODE_OPTIONS: `--import=${project.path('list-loads.mjs')}`, NODE_DEBUG: 'module' };
    const touch = await runCli(['run', 'p', '--json'], { cwd: project.root, env });
    expect(touch.code, touch.stderr).toBe(0);
    expect(touch.stdout).toContain('"status":"succeeded"');
    // The listing works: the run loaded its work queue.
    const loaded = loadedPackages(touch.stderr);
    expect(loaded.has('p-queue')).toBe(true);
    expect([...loaded].filter((name) => ['yaml', 'zod', 'picomatch'].includes(name))).toEqual([]);
  });

  it("start-up - a built-in pipeline's tasks run compiled from dist/tasks, without starting tsx's loader", async () => {
    project = loadListingProject();
    cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), project.path('.massgen/massgen_logs'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    const env = { ...process.env, NODE_OPTIONS: `--import=${project.path('list-loads.mjs')}`, NODE_DEBUG: 'module' };
    const run = await runCli(['run', 'analyze'], { cwd: project.root, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/done: analyze: \d+ succeeded/);
    expect(run.stderr).toMatch(/LOAD file:\/\/\S*\/dist\/tasks\/analyze-turn\.mjs/);
    expect(run.stderr).toMatch(/LOAD file:\/\/\S*\/dist\/tasks\/summarize-runs\.mjs/);
    expect(run.stderr).not.toMatch(/\/tasks\/[\w-]+\.ts/);
    expect(loadedPackages(run.stderr).has('tsx')).toBe(false);
  });
});
