// The runner programs are files under src/engine/shell/runners/, not compiled: refinery run from an
// installed package's dist/ must still find them (it resolves them from the package root).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, REPO_ROOT, tempProject, type TempProject } from '../../helpers/project.ts';

let base: string;
let packageDir: string;
let project: TempProject | undefined;

beforeAll(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'refinery-dist-'));
  packageDir = path.join(base, 'refinery');
  mkdirSync(packageDir);
  for (const entry of ['bin', 'src', 'schemas', 'package.json', 'tsconfig.json', 'tsconfig.build.json'])
    cpSync(path.join(REPO_ROOT, entry), path.join(packageDir, entry), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(packageDir, 'node_modules'), 'dir');
  const build = spawnSync('npm', ['run', 'build'], { cwd: packageDir, encoding: 'utf8' });
  expect(build.status, `${build.stdout}\n${build.stderr}`).toBe(0);
}, 120_000);

afterAll(() => {
  project?.cleanup();
  rmSync(base, { recursive: true, force: true });
});

describe('runner programs from dist', () => {
  it('runner programs - a run: stage runs from the compiled dist/, whose build copied no runner program', async () => {
    expect(existsSync(path.join(packageDir, 'dist', 'src', 'engine', 'shell', 'runner-pool.js'))).toBe(true);
    expect(existsSync(path.join(packageDir, 'dist', 'src', 'engine', 'shell', 'runners'))).toBe(false);
    project = tempProject({
      'pipelines/p.yaml':
        'pipeline: p\nstages:\n  a: { run: "echo one > ${outputs.o}", outputs: { o: out/a.txt } }\n  b: { run: "cat out/a.txt out/a.txt > ${outputs.o}", inputs: [out/a.txt], outputs: { o: out/b.txt } }\n',
    });
    const cli = path.join(packageDir, 'bin', 'refinery.js');
    const result = spawnSync(process.execPath, [cli, 'run', 'p', '--json'], {
      cwd: project.root,
      encoding: 'utf8',
      env: { ...process.env, REFINERY_FROM_DIST: '1', CI: 'true', NO_COLOR: '1' },
    });
    expect(result.status, result.stderr).toBe(0);
    expect(
      events(result.stdout)
        .filter((e) => e.type === 'stage-end')
        .map((e) => e.status),
    ).toEqual(['succeeded', 'succeeded']);
    expect(readFileSync(project.path('out/b.txt'), 'utf8')).toBe('one\none\n');
  });
});
