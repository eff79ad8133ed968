// refinery as a user gets it: installed as a dependency of another project, its dist/ built with
// `npm run build`, started through node_modules/.bin/refinery. The publish command handed to the agent
// must name a launcher that exists in that layout, whether refinery runs from dist/ or from its sources.
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, run, scriptedAgentArgv, tempDir } from './support.ts';

let consumer: { dir: string; cleanup: () => void };
let packageDir: string;
let launcher: string;

beforeAll(async () => {
  consumer = tempDir('refinery-consumer-');
  writeFileSync(path.join(consumer.dir, 'package.json'), '{ "type": "module", "private": true }\n');
  packageDir = path.join(consumer.dir, 'node_modules', 'refinery');
  mkdirSync(packageDir, { recursive: true });
  for (const entry of ['bin', 'src', 'schemas', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) {
    cpSync(path.join(REPO_ROOT, entry), path.join(packageDir, entry), { recursive: true });
  }
  // The package's own dependencies (what npm would have installed under it).
  symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(packageDir, 'node_modules'), 'dir');
  const build = await run(['npm', 'run', 'build'], { cwd: packageDir });
  expect(build.code, `${build.stdout}\n${build.stderr}`).toBe(0);
  expect(existsSync(path.join(packageDir, 'dist/src/cli/main.js'))).toBe(true);
  mkdirSync(path.join(consumer.dir, 'node_modules', '.bin'));
  launcher = path.join(consumer.dir, 'node_modules', '.bin', 'refinery');
  symlinkSync('../refinery/bin/refinery.js', launcher);
});

afterAll(() => {
  consumer?.cleanup();
});

/** `refinery jobs submit` in the consumer project with a command agent that runs its instructions' publish commands. */
async function submit(env: NodeJS.ProcessEnv, jobId: string, start: string[] = [process.execPath, launcher]) {
  rmSync(path.join(consumer.dir, '.mam'), { recursive: true, force: true });
  const argv = [...start, 'jobs', 'submit', '--job', jobId, '--prompt', 'sort the problems', '--agent-kind', 'command', '--timeout', '30'];
  const result = await run([...argv, '--', 'env', 'AGENT_SCRIPT=started,completed:sorted', ...scriptedAgentArgv()], {
    cwd: consumer.dir,
    env,
  });
  const instructions = readFileSync(path.join(consumer.dir, '.mam/delegate_job_logs', jobId, 'instructions.1.worker.md'), 'utf8');
  const publishLine = instructions.split('\n').find((line) => line.startsWith('On success run: ')) ?? '';
  return { ...result, launcherInInstructions: publishLine.split(' ')[4] as string };
}

describe('refinery installed as a dependency', () => {
  it('jobs submit from the built package (dist) - the agent is handed a publish command that exists and the job completes', async () => {
    const result = await submit({ REFINERY_FROM_DIST: '1', REFINERY_FROM_SOURCE: '' }, 'd1d1d1d1');
    expect(result.launcherInInstructions).toBe(path.join(packageDir, 'bin', 'refinery.js'));
    expect(existsSync(result.launcherInInstructions)).toBe(true);
    expect(result.stdout, result.stderr).toMatch(/seq=2 completed +sorted/);
    expect(result.stdout).toContain('outcome: completed (sorted)');
    expect(result.code).toBe(0);
  });

  it('jobs submit from the same package run from its sources - the publish command is the same launcher', async () => {
    const result = await submit({ REFINERY_FROM_SOURCE: '1', REFINERY_FROM_DIST: '' }, 'e2e2e2e2');
    expect(result.launcherInInstructions).toBe(path.join(packageDir, 'bin', 'refinery.js'));
    expect(result.stdout, result.stderr).toContain('outcome: completed (sorted)');
    expect(result.code).toBe(0);
  });

  it('jobs submit through npx in the consumer project - the publish command is the installed launcher', async () => {
    const result = await submit({ REFINERY_FROM_DIST: '1', REFINERY_FROM_SOURCE: '' }, 'f3f3f3f3', ['npx', '--no-install', 'refinery']);
    expect(result.launcherInInstructions).toBe(path.join(packageDir, 'bin', 'refinery.js'));
    expect(result.stdout, result.stderr).toContain('outcome: completed (sorted)');
    expect(result.code).toBe(0);
  });
});
