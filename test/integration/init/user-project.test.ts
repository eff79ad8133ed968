// refinery as a user gets it: `npm pack` of this repository installed with npm into a project made
// by `npm init -y` (so "type": "commonjs"), then only the installed package's commands.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, stageEnds } from '../../helpers/project.ts';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program as a user's shell would, in the given folder; never through a shell string. */
function exec(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `npx --no`: the project's own installed binary, or an error; never a download. */
function npx(cwd: string, ...args: string[]): Promise<Result> {
  return exec('npx', ['--no', '--', ...args], cwd);
}

async function ok(pending: Promise<Result>, what: string): Promise<Result> {
  const r = await pending;
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return r;
}

function newestTs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestTs(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

let work: string;
/** A project as `npm init -y` + `npm install --save-dev <tarball>` leave it; tests work on copies. */
let installed: string;
let packedFiles: string[];

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'refinery-user-'));
  // The tarball carries dist/ as it is; build it only when src/ is newer (the test suite's pretest built it).
  const stamp = path.join(REPO_ROOT, 'dist', '.stamp');
  if (!existsSync(stamp) || statSync(stamp).mtimeMs < newestTs(path.join(REPO_ROOT, 'src')))
    await ok(exec('npm', ['run', 'build'], REPO_ROOT), 'npm run build');
  // --ignore-scripts: `prepare` would rebuild dist/ under the feet of other tests running it.
  const pack = await ok(exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO_ROOT), 'npm pack');
  const [info] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  if (!info) throw new Error(`npm pack printed no package: ${pack.stdout}`);
  packedFiles = info.files.map((f) => f.path);
  installed = path.join(work, 'installed');
  mkdirSync(installed);
  await ok(exec('npm', ['init', '-y'], installed), 'npm init -y');
  await ok(
    exec('npm', ['install', '--save-dev', path.join(work, info.filename), '--prefer-offline', '--no-audit', '--no-fund'], installed),
    'npm install <tarball>',
  );
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A copy of the installed project (node_modules and its .bin links included). */
function freshProject(name: string): string {
  const dir = path.join(work, name);
  cpSync(installed, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

function countLines(file: string): number {
  return (readFileSync(file, 'utf8').match(/\n/g) ?? []).length;
}

/** Where analyze-turn writes: each turn_N of a run, or the run's root for logs older than turn folders. */
function expectedAnalyses(logs: string): string[] {
  const out: string[] = [];
  for (const run of readdirSync(logs)
    .filter((d) => d.startsWith('log_'))
    .sort()) {
    const turns = readdirSync(path.join(logs, run)).filter((d) => /^turn_\d+$/.test(d));
    if (turns.length === 0) out.push(path.join(logs, run, 'analysis.json'));
    for (const turn of turns) out.push(path.join(logs, run, turn, 'analysis.json'));
  }
  return out.sort();
}

describe('refinery in a user project', () => {
  it('user project - the packed tarball holds what runs and none of the tests, benchmarks or scripts', () => {
    for (const needed of [
      'bin/refinery.js',
      'dist/.stamp',
      'dist/src/cli/main.js',
      'src/task/define-task.ts',
      'tasks/analyze-turn.ts',
      'schemas/turn-analysis.schema.json',
      'pipelines/analyze.yaml',
      'templates/init/Justfile',
      'templates/init/gitignore',
    ]) {
      expect(packedFiles).toContain(needed);
    }
    expect(packedFiles.filter((f) => /^(test|bench|scripts|node_modules|\.ci|src\/massgen-gen|dist\/src\/massgen-gen)\//.test(f))).toEqual(
      [],
    );
    // What a run in the repository leaves beside the example logs is not part of the package.
    expect(packedFiles.filter((f) => /(^|\/)(analysis\.json|ANALYSIS_REPORT\.md)$/.test(f))).toEqual([]);
    const manifest = JSON.parse(readFileSync(path.join(installed, 'node_modules', 'refinery', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies)).toContain('rust-just');
  });

  it('user project - refinery init in a commonjs project: the starter pipeline writes a line count valid against its schema; just lists the recipes', async () => {
    const project = freshProject('starter');
    expect(JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')).type).toBe('commonjs');
    const init = await ok(npx(project, 'refinery', 'init'), 'refinery init');
    for (const file of [
      'refinery.config.yaml',
      'Justfile',
      'pipelines/starter.yaml',
      'tasks/count-lines.ts',
      'schemas/line-counts.schema.json',
    ]) {
      expect(init.stdout).toMatch(new RegExp(`wrote\\s+${file.replace(/\./g, '\\.')}\\n`));
      expect(existsSync(path.join(project, file))).toBe(true);
    }
    expect(readFileSync(path.join(project, '.gitignore'), 'utf8').split('\n')).toContain('.refinery/');

    const run = await npx(project, 'refinery', 'run', 'starter', '--json');
    expect(run.stderr).toBe('');
    expect(stageEnds(run.stdout)).toEqual({ count: 'succeeded' });
    expect(run.code).toBe(0);
    const report = JSON.parse(readFileSync(path.join(project, 'reports/line-counts.json'), 'utf8')) as {
      files: Array<{ path: string; lines: number }>;
      total: number;
    };
    const counted = ['pipelines/starter.yaml', 'schemas/line-counts.schema.json', 'tasks/count-lines.ts'];
    expect(report.files).toEqual(counted.map((f) => ({ path: f, lines: countLines(path.join(project, f)) })));
    expect(report.total).toBe(counted.reduce((sum, f) => sum + countLines(path.join(project, f)), 0));
    await ok(npx(project, 'refinery', 'validate', 'reports/line-counts.json', '--schema', 'line-counts'), 'refinery validate');
    expect(stageEnds((await ok(npx(project, 'refinery', 'run', 'starter', '--json'), 'second run')).stdout)).toEqual({ count: 'fresh' });

    const list = await ok(npx(project, 'just', '--list'), 'just --list');
    expect(
      list.stdout
        .match(/^ {4}[\w-]+/gm)
        ?.map((r) => r.trim())
        .sort(),
    ).toEqual(['analyze', 'analyze-self', 'experiment', 'refine', 'ui', 'watch']);
    // The recipes call the project's own bin, without npx's start-up on every call.
    const refinery = await ok(npx(project, 'just', '--evaluate', 'refinery'), 'just --evaluate refinery');
    expect(refinery.stdout.trim()).toBe('node_modules/.bin/refinery');
  }, 180_000);

  it('user project - refinery init --massgen: refinery run analyze and just analyze cover every turn of .massgen/massgen_logs with a valid analysis.json', async () => {
    const project = freshProject('massgen');
    await ok(npx(project, 'refinery', 'init', '--massgen'), 'refinery init --massgen');
    const logs = path.join(project, '.massgen', 'massgen_logs');
    cpSync(path.join(project, 'node_modules', 'refinery', 'examples', 'massgen_logs'), logs, { recursive: true });
    const expected = expectedAnalyses(logs);
    expect(expected.length).toBeGreaterThan(3);
    expect(expected.filter((f) => existsSync(f))).toEqual([]);

    const run = await npx(project, 'refinery', 'run', 'analyze', '--param', 'logs=.massgen/massgen_logs', '--json');
    const ends = stageEnds(run.stdout);
    expect(Object.values(ends).every((s) => s === 'succeeded')).toBe(true);
    // One stage per turn, and the summary of them all.
    expect(Object.keys(ends).filter((stage) => stage !== 'summary')).toHaveLength(expected.length);
    expect(ends.summary).toBe('succeeded');
    expect(run.code).toBe(0);
    expect(expected.filter((f) => !existsSync(f))).toEqual([]);
    await ok(
      npx(project, 'refinery', 'validate', ...expected.map((f) => path.relative(project, f)), '--schema', 'turn-analysis'),
      'refinery validate analyses',
    );

    // The Justfile's recipe reads the same folder with no logs=PATH: every turn is up to date.
    const again = await ok(npx(project, 'just', 'analyze', '--json'), 'just analyze');
    expect(stageEnds(again.stdout)).toEqual(Object.fromEntries(Object.keys(ends).map((stage) => [stage, 'fresh'])));
  }, 180_000);

  it('user project - with a watch running, node_modules/.bin/refinery run is answered by the watch', async () => {
    const project = freshProject('quick');
    await ok(npx(project, 'refinery', 'init'), 'refinery init');
    const bin = path.join(project, 'node_modules', '.bin', 'refinery');
    const watch = spawn(bin, ['watch', 'starter', '--no-mqtt', '-v'], {
      cwd: project,
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<void>((resolve) => watch.on('close', () => resolve()));
    /** Resolves once the watch has said what `said` looks for (it may have already). */
    const untilSaid = (said: (out: string) => boolean, what: string): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!said(stderr)) return;
          watch.stdout.off('data', check);
          watch.stderr.off('data', check);
          resolve();
        };
        watch.stdout.on('data', check);
        watch.stderr.on('data', check);
        void exited.then(() => reject(new Error(`the watch ended before it said ${what}:\n${stderr}`)));
        check();
      });
    const collect = (d: Buffer): void => {
      stderr += d.toString();
    };
    watch.stdout.on('data', collect);
    watch.stderr.on('data', collect);
    // Serving, and its first run over (a run asked during it would wait for it, and say so).
    await untilSaid((out) => out.includes('answered by this watch') && /^done: /m.test(out), 'it serves');
    try {
      const run = await exec(bin, ['run', 'starter', '--json'], project);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(stageEnds(run.stdout)).toEqual({ count: 'fresh' });
      // The watch logs the run it answered once the client has its answer: waited for, not raced.
      await untilSaid((out) => out.includes('answered a run (exit 0)'), 'it answered a run');
      // Another command is answered here, through the same link.
      const version = await exec(bin, ['--version'], project);
      expect({ code: version.code, stdout: version.stdout }).toEqual({ code: 0, stdout: '0.1.0\n' });
    } finally {
      watch.kill('SIGINT');
      await exited;
    }
  }, 180_000);

  it('user project - npx just refine with no arguments runs the bundled offline example through the config init wrote', async () => {
    const project = freshProject('refine');
    await ok(npx(project, 'refinery', 'init'), 'refinery init');
    const r = await npx(project, 'just', 'refine', '--json');
    expect(r.code).toBe(0);
    const ends = stageEnds(r.stdout);
    expect(ends.summary).toBe('succeeded');
    expect(Object.values(ends).filter((s) => s === 'failed')).toEqual([]);
    await ok(
      npx(project, 'refinery', 'validate', '.refinery/sessions/example/summary.json', '--schema', 'refine-summary'),
      'refinery validate summary',
    );
  }, 180_000);
});
