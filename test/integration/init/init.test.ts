import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { events, REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;

afterEach(() => {
  project?.cleanup();
  project = undefined;
});

const WRITTEN = ['Justfile', 'pipelines/starter.yaml', 'refinery.config.yaml', 'schemas/line-counts.schema.json', 'tasks/count-lines.ts'];

/** Every file under the project except node_modules: path -> content and mtime. */
function snapshot(p: TempProject): Record<string, { content: string; mtimeMs: number }> {
  const out: Record<string, { content: string; mtimeMs: number }> = {};
  const walk = (rel: string): void => {
    for (const entry of readdirSync(p.path(rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.name === 'node_modules') continue;
      if (entry.isDirectory()) walk(child);
      else out[child] = { content: readFileSync(p.path(child), 'utf8'), mtimeMs: statSync(p.path(child)).mtimeMs };
    }
  };
  walk('');
  return out;
}

/** The line init printed for a file: its verb. */
function verb(stdout: string, file: string): string | undefined {
  return stdout
    .split('\n')
    .find((l) => l.trim().split(/\s{2,}/)[1] === file)
    ?.trim()
    .split(/\s{2,}/)[0];
}

/** refinery's own `just` (the project's Justfile evaluated as a user's `npx just` would). */
function just(cwd: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO_ROOT, 'node_modules', '.bin', 'just'), args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('refinery init', () => {
  it('init - a second run changes nothing, edited files included; --force puts back what init writes', async () => {
    project = tempProject();
    const first = await runCli(['init'], { cwd: project.root });
    expect(first.code).toBe(0);
    for (const file of WRITTEN) expect(verb(first.stdout, file)).toBe('wrote');
    const written = snapshot(project);
    expect(Object.keys(written).sort()).toEqual(['.gitignore', ...WRITTEN, 'package.json'].sort());

    project.write('Justfile', `${written.Justfile?.content}\nmine:\n    echo mine\n`);
    project.write('refinery.config.yaml', 'backends: {}\n');
    const edited = snapshot(project);
    const second = await runCli(['init'], { cwd: project.root });
    expect(second.code).toBe(0);
    expect(verb(second.stdout, 'Justfile')).toBe('left');
    expect(verb(second.stdout, 'refinery.config.yaml')).toBe('left');
    expect(second.stdout).toContain('--force overwrites it');
    for (const file of ['pipelines/starter.yaml', 'schemas/line-counts.schema.json', 'tasks/count-lines.ts', '.gitignore'])
      expect(verb(second.stdout, file)).toBe('up to date');
    expect(snapshot(project)).toEqual(edited);

    const forced = await runCli(['init', '--force'], { cwd: project.root });
    expect(forced.code).toBe(0);
    expect(verb(forced.stdout, 'Justfile')).toBe('overwrote');
    expect(verb(forced.stdout, 'refinery.config.yaml')).toBe('overwrote');
    expect(verb(forced.stdout, 'tasks/count-lines.ts')).toBe('up to date');
    const after = snapshot(project);
    for (const file of Object.keys(written)) expect(after[file]?.content).toBe(written[file]?.content);
    // Untouched files keep their mtime: nothing is rewritten to the same content.
    expect(after['tasks/count-lines.ts']?.mtimeMs).toBe(written['tasks/count-lines.ts']?.mtimeMs);
    expect(readdirSync(project.root).filter((f) => f.includes('refinery-init'))).toEqual([]);
  });

  it('init - .gitignore keeps its lines; only what it lacks is appended, once', async () => {
    project = tempProject({ '.gitignore': 'dist\n/.refinery' });
    const r = await runCli(['init'], { cwd: project.root });
    expect(r.code).toBe(0);
    expect(readFileSync(project.path('.gitignore'), 'utf8')).toBe('dist\n/.refinery\nnode_modules/\n');
    expect(r.stdout).toMatch(/appended\s+\.gitignore\s+\(node_modules\/\)/);
    await runCli(['init', '--force'], { cwd: project.root });
    expect(readFileSync(project.path('.gitignore'), 'utf8')).toBe('dist\n/.refinery\nnode_modules/\n');
  });

  it('init --massgen - just analyze reads .massgen/massgen_logs; without --massgen it asks for logs=PATH', async () => {
    project = tempProject();
    await runCli(['init'], { cwd: project.root });
    const plain = await just(project.root, 'analyze');
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('npx just analyze logs=PATH');
    const self = await just(project.root, 'analyze-self');
    expect(self.code).toBe(2);
    expect(self.stderr).toContain('npx just analyze-self logs=PATH');
    expect((await just(project.root, '--evaluate', 'logs')).stdout).toBe('');

    const massgen = await runCli(['init', '--massgen', '--force'], { cwd: project.root });
    expect(massgen.code).toBe(0);
    expect((await just(project.root, '--evaluate', 'logs')).stdout).toBe('.massgen/massgen_logs');
    expect((await just(project.root, '--evaluate', 'refinery_dir')).stdout).toBe('node_modules/refinery');
  });

  it('init - the starter task refuses a with: key it does not take (a typo) instead of ignoring it', async () => {
    project = tempProject();
    await runCli(['init'], { cwd: project.root });
    const typo = `pipeline: typo
stages:
  count:
    task: count-lines
    with: { file: [package.json] }
    outputs: { counts: { path: reports/typo.json, schema: line-counts } }
`;
    writeFileSync(project.path('pipelines/typo.yaml'), typo);
    const r = await runCli(['run', 'typo', '--json'], { cwd: project.root });
    expect(r.code).toBe(1);
    const end = events(r.stdout).find((e) => e.type === 'stage-end');
    expect(end).toMatchObject({ status: 'failed', code: 'invalid-params' });
    // A problem of the params as a whole is named without a path.
    expect(end?.reason).toBe(`invalid params for task 'count-lines': Unrecognized key: "file"`);
    expect(existsSync(project.path('reports/typo.json'))).toBe(false);
  });

  it('init - an unknown option is refused with the usage, exit 2, nothing written', async () => {
    project = tempProject();
    const r = await runCli(['init', '--masgen'], { cwd: project.root });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '--masgen'");
    expect(r.stderr).toContain('Usage: refinery init');
    expect(Object.keys(snapshot(project))).toEqual(['package.json']);
  });
});
