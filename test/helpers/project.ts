import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(REPO_ROOT, 'bin', 'refinery.js');

export interface TempProject {
  root: string;
  write(rel: string, content: string): string;
  path(rel: string): string;
  cleanup(): void;
}

/** A throwaway project: ESM package, refinery resolvable as `refinery/task`, files as given. */
export function tempProject(files: Record<string, string> = {}): TempProject {
  const root = mkdtempSync(path.join(os.tmpdir(), 'refinery-test-'));
  writeFileSync(path.join(root, 'package.json'), '{ "type": "module", "private": true }\n');
  mkdirSync(path.join(root, 'node_modules'), { recursive: true });
  symlinkSync(REPO_ROOT, path.join(root, 'node_modules', 'refinery'), 'dir');
  const project: TempProject = {
    root,
    write(rel, content) {
      const file = path.join(root, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    path: (rel) => path.join(root, rel),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
  for (const [rel, content] of Object.entries(files)) project.write(rel, content);
  return project;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startCli(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', CI: 'true', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

/** Sends SIGINT to a started CLI once its stdout shows `text` (Ctrl-C at that moment); resolves with its exit code. */
export function interruptOnceItPrints(child: ChildProcess, text: string): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => {
    const seen = stdout.includes(text);
    stdout += d.toString();
    if (!seen && stdout.includes(text)) child.kill('SIGINT');
  });
  return exited;
}

/** Runs the real CLI in a child process and collects its output. */
export function runCli(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  return collect(startCli(args, options));
}

function collect(child: ChildProcess): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs bin/refinery.js as a program, as a user's shell does (node_modules/.bin/refinery links to it). */
export function runCliProgram(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> {
  const env = { ...process.env, NO_COLOR: '1', CI: 'true', ...options.env };
  return collect(spawn(CLI, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Parses `--json` event lines from a CLI's stdout. */
export function events(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

export function stageEnds(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of events(stdout)) if (e.type === 'stage-end') out[e.stage as string] = e.status as string;
  return out;
}

export const COPY_JSON_TASK = `import { readFile, writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'copy-json',
  params: z.object({ from: z.string() }),
  async run(ctx) {
    const text = await readFile(ctx.params.from, 'utf8');
    await writeFile(ctx.outputs.report, JSON.stringify({ lines: text.trim().split('\\n') }));
    return { summary: 'copied' };
  },
});
`;

export const DEMO_REPORT_SCHEMA = JSON.stringify({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['lines'],
  properties: { lines: { type: 'array', items: { type: 'string' } } },
});

/** The minimal pipeline, exactly as written there. */
export const DEMO_PIPELINE = `pipeline: demo
params:
  greeting: { type: string, default: hello }
stages:
  a:
    run: "cat src/a.txt > \${outputs.a} && echo \${params.greeting} >> \${outputs.a}"
    inputs: [src/a.txt]
    outputs: { a: out/a.txt }
  b:
    task: copy-json            # tasks/copy-json.ts (any task name)
    with: { from: out/a.txt }
    inputs: [out/a.txt]        # an input that is another stage's output implies the edge
    outputs: { report: { path: out/b.json, schema: demo-report } }   # schemas/demo-report.schema.json
    needs: [a]
`;

export function demoProject(): TempProject {
  return tempProject({
    'pipelines/demo.yaml': DEMO_PIPELINE,
    'tasks/copy-json.ts': COPY_JSON_TASK,
    'schemas/demo-report.schema.json': DEMO_REPORT_SCHEMA,
    'src/a.txt': 'alpha\n',
  });
}
