// The README's install commands (repeated in docs/install.md), run exactly as written: the repository under test is cloned
// (its git URL is the only thing replaced), built with npm ci, packed, and installed with npm into
// a project beside it, whose refinery then answers --version and runs the built-in analyze.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/project.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';

const GIT = systemTool('git');
const BASH = systemTool('bash');

/** The ```sh block of a doc that installs from a clone (the one that packs). */
function packBlock(file: string): string {
  const doc = readFileSync(path.join(REPO_ROOT, file), 'utf8');
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string).find((b) => b.includes('npm pack'));
  if (!block) throw new Error(`${file} has no \`\`\`sh block with npm pack`);
  return block;
}

/** The README's install block, which docs/install.md repeats word for word. */
function installBlock(): string {
  const block = packBlock('README.md');
  expect(packBlock(path.join('docs', 'install.md'))).toBe(block);
  return block;
}

let work: string | undefined;
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(skipWithout(GIT, BASH))('docs/install.md', () => {
  it('install - the registry line is kept, marked for when refinery is published', () => {
    const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'install.md'), 'utf8');
    expect(doc).toContain('npm install --save-dev refinery   # once published on the npm registry');
  });

  it('install - the commands as written clone, pack and install refinery into a project, whose npx refinery runs analyze', () => {
    const block = installBlock();
    const clone = /^git clone (\S+) refinery$/m.exec(block);
    expect(clone, 'the block starts from `git clone URL refinery`').not.toBeNull();
    const script = block.replace(clone?.[0] as string, `git clone --quiet ${JSON.stringify(REPO_ROOT)} refinery`);
    work = mkdtempSync(path.join(os.tmpdir(), 'refinery-install-'));
    // my-project: an npm project holding MassGen logs where MassGen writes them.
    const project = path.join(work, 'my-project');
    mkdirSync(project);
    expect(spawnSync('npm', ['init', '-y'], { cwd: project, encoding: 'utf8' }).status).toBe(0);
    cpSync(path.join(REPO_ROOT, 'examples', 'massgen_logs'), path.join(project, '.massgen', 'massgen_logs'), { recursive: true });
    const result = spawnSync(BASH.path as string, ['-e', '-c', script], {
      cwd: work,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true', NO_COLOR: '1', npm_config_audit: 'false', npm_config_fund: 'false' },
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^0\.1\.0$/m);
    expect(result.stdout).toMatch(/^done: analyze: /m);
    const manifest = JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
    expect(manifest.devDependencies?.refinery).toBe('file:../refinery/refinery-0.1.0.tgz');
    // The analysis landed beside the turns of the first run, as the built-in pipeline promises.
    const logs = path.join(project, '.massgen', 'massgen_logs');
    const first = readdirSync(logs).filter((d) => d.startsWith('log_'))[0] as string;
    expect(readdirSync(path.join(logs, first), { recursive: true }).map(String)).toContain(path.join('turn_1', 'analysis.json'));
  }, 1_200_000);
});
