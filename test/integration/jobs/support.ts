import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '../../..');
export const TSX_LOADER = path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs');
export const JOBS_CLI = path.join(here, 'fixtures/jobs-cli.ts');
export const SCRIPTED_AGENT = path.join(here, 'fixtures/scripted-agent.mjs');
export const PYTHON_PUBLISHER = path.join(REPO_ROOT, 'test/helpers/python-publisher.py');

/** argv that runs refinery's jobs command in a fresh process (as bin/refinery.js would). */
export function jobsCliArgv(...args: string[]): string[] {
  return [process.execPath, '--import', TSX_LOADER, JOBS_CLI, 'jobs', ...args];
}

/** The publish command prefix to hand to agents in tests (without --job). */
export function publishArgv(registryDir: string): string[] {
  return jobsCliArgv('publish', '--registry-dir', registryDir);
}

export function scriptedAgentArgv(): string[] {
  return [process.execPath, SCRIPTED_AGENT];
}

export function tempDir(prefix = 'refinery-jobs-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (argv array, no shell). */
export function run(argv: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string }): Promise<RunResult> {
  const [file, ...args] = argv as [string, ...string[]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export { memoryIo } from '../../helpers/memory-io.ts';
