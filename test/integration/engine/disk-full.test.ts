// A full disk, for real: the project lives on a 1 MB tmpfs filled to a chosen number of free
// kilobytes. Every run either succeeds or fails with one clear line and exit 1; no stack trace,
// no temporary file left, and once there is space again the next run finishes the job.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  demoProject,
  DEMO_PIPELINE,
  COPY_JSON_TASK,
  DEMO_REPORT_SCHEMA,
  REPO_ROOT,
  runCli,
  type TempProject,
} from '../../helpers/project.ts';

let mountPoint: string;

beforeAll(() => {
  mountPoint = mkdtempSync(path.join(os.tmpdir(), 'refinery-full-'));
  // Needs root (CAP_SYS_ADMIN), as the test suite runs here and in CI; a failure says which.
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mountPoint]);
});

afterAll(() => {
  if (!mountPoint) return;
  spawnSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
});

/** The demo project on the small file system. */
function projectOnTmpfs(): string {
  const root = path.join(mountPoint, 'project');
  rmSync(root, { recursive: true, force: true });
  const files: Record<string, string> = {
    'package.json': '{ "type": "module", "private": true }\n',
    'pipelines/demo.yaml': DEMO_PIPELINE,
    'tasks/copy-json.ts': COPY_JSON_TASK,
    'schemas/demo-report.schema.json': DEMO_REPORT_SCHEMA,
    'src/a.txt': 'alpha\n',
  };
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  mkdirSync(path.join(root, 'node_modules'), { recursive: true });
  symlinkSync(REPO_ROOT, path.join(root, 'node_modules', 'refinery'), 'dir');
  return root;
}

/** Fills the file system until `freeKb` kilobytes are left. */
function fill(freeKb: number): string {
  const filler = path.join(mountPoint, 'filler');
  rmSync(filler, { force: true });
  const st = statfsSync(mountPoint);
  const bytes = Math.max(0, st.bavail * st.bsize - freeKb * 1024);
  try {
    writeFileSync(filler, Buffer.alloc(bytes));
  } catch {
    /* full already */
  }
  return filler;
}

function temporaryFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tmp'));
}

describe('disk full', () => {
  it('disk full - at every amount of free space a run succeeds or fails with one clear error, no stack trace and no temporary file; the next run with space finishes', async () => {
    const root = projectOnTmpfs();
    const failedOn = new Set<string>();
    for (let freeKb = 0; freeKb <= 44; freeKb += 4) {
      rmSync(path.join(root, '.refinery'), { recursive: true, force: true });
      rmSync(path.join(root, 'out'), { recursive: true, force: true });
      writeFileSync(path.join(root, 'src/a.txt'), `free ${freeKb}\n`);
      const filler = fill(freeKb);
      const full = await runCli(['run', 'demo'], { cwd: root });
      const where = `with ${freeKb} KB free:\n${full.stdout}${full.stderr}`;
      expect(full.stderr, where).not.toMatch(/\n\s+at |node:internal|Error:|TypeError/);
      expect([0, 1], where).toContain(full.code);
      if (full.code === 1) {
        const errors = full.stderr.split('\n').filter((l) => l.startsWith('refinery: error:'));
        expect(errors, where).toHaveLength(1);
        expect(errors[0], where).toMatch(
          /^refinery: error: no space left on device \(ENOSPC\): cannot write .+; free some space and run again$/,
        );
        for (const file of (errors[0] as string)
          .replace(/^.*cannot write /, '')
          .replace(/; free.*$/, '')
          .split(', '))
          failedOn.add(file.replace(/\/(runs\/)[^/]+\//, '/$1RUN/').replace(/noop-[0-9a-f]+/, 'noop-ID'));
      }
      expect(temporaryFiles(path.join(root, '.refinery')), where).toEqual([]);
      rmSync(filler, { force: true });
      const after = await runCli(['run', 'demo'], { cwd: root });
      expect(after.code, `${where}\nthen with space:\n${after.stderr}`).toBe(0);
      expect(readFileSync(path.join(root, 'out/a.txt'), 'utf8')).toBe(`free ${freeKb}\nhello\n`);
      expect(JSON.parse(readFileSync(path.join(root, 'out/b.json'), 'utf8'))).toEqual({ lines: [`free ${freeKb}`, 'hello'] });
    }
    // The sweep reached the places the review found crashing: taking the lock and saving the file hashes.
    expect([...failedOn]).toEqual(expect.arrayContaining(['.refinery/lock', '.refinery/cache/file-hashes.json']));
  }, 240_000);

  it('disk full - temporary files left by runs that died are removed by the next run; a live process keeps its own', async () => {
    const project: TempProject = demoProject();
    try {
      expect((await runCli(['run', 'demo'], { cwd: project.root })).code).toBe(0);
      const dead = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
      const leftovers = [
        `.refinery/cache/file-hashes.json.${dead}.tmp`,
        `.refinery/state/demo.jsonl.${dead}.tmp`,
        `.refinery/state/noop-0123456789abcdef.json.${dead}.tmp`,
        `.refinery/cache/pipelines/0123.json.${dead}.tmp`,
        `.refinery/lock.${dead}.0011223344556677.tmp`,
        `.refinery/cache/file-hashes.json.${dead}.7.tmp`,
      ];
      for (const rel of leftovers) project.write(rel, 'partial');
      const live = `.refinery/cache/pipelines/4567.json.${process.pid}.tmp`;
      project.write(live, 'being written');
      project.write('src/a.txt', 'changed\n');
      const result = await runCli(['run', 'demo'], { cwd: project.root });
      expect(result.code, result.stderr).toBe(0);
      expect(leftovers.filter((rel) => existsSync(project.path(rel)))).toEqual([]);
      expect(existsSync(project.path(live))).toBe(true);
    } finally {
      project.cleanup();
    }
  });
});
