import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, statSync, symlinkSync, truncateSync, utimesSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const MiB = 1024 * 1024;
/** Just over what one readFileSync can return (2 GiB): the size the old hashing recorded as "missing". */
const OVER_2_GIB = 2048 * MiB + MiB;
const OLD = Date.now() / 1000 - 3600;

/** sha256 (base64url) of `zeros` zero bytes followed by `tail`, without a file or a big buffer. */
function zerosHash(zeros: number, tail = ''): string {
  const hash = createHash('sha256');
  const chunk = Buffer.alloc(MiB);
  for (let left = zeros; left > 0; left -= chunk.length) hash.update(left >= chunk.length ? chunk : chunk.subarray(0, left));
  return hash.update(tail).digest('base64url');
}

/** The input hashes of a stage's last successful record in the pipeline's journal. */
function recordedInputs(p: TempProject, pipeline: string, stage: string): Record<string, string> | undefined {
  let inputs: Record<string, string> | undefined;
  for (const line of readFileSync(p.path(`.refinery/state/${pipeline}.jsonl`), 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { s: string; f: string | null; r?: { parts: { inputs: Record<string, string> } } };
    if (entry.s === stage) inputs = entry.r?.parts.inputs;
  }
  return inputs;
}

/** A task stage that reports the peak RSS of the refinery process, after its inputs were hashed. */
const RSS_TASK = `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'peak-rss',
  params: z.object({}),
  async run(ctx) {
    await writeFile(ctx.outputs.report, JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS }));
    return { summary: 'measured' };
  },
});
`;

describe('big files', () => {
  it('input hashing - a 640 MB input is hashed in bounded memory: the run peaks under 320 MB RSS and records the exact sha256', async () => {
    project = tempProject({
      'tasks/peak-rss.ts': RSS_TASK,
      'pipelines/p.yaml': `pipeline: p
stages:
  s:
    task: peak-rss
    inputs: [data/big.bin]
    outputs: { report: out/rss.json }
`,
    });
    project.write('data/big.bin', '');
    // Sparse: no disk used, but every byte is read (as zeros) when hashed.
    truncateSync(project.path('data/big.bin'), 640 * MiB);
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code, result.stderr).toBe(0);
    expect(stageEnds(result.stdout)).toEqual({ s: 'succeeded' });
    const { maxRssKb } = JSON.parse(readFileSync(project.path('out/rss.json'), 'utf8')) as { maxRssKb: number };
    expect(maxRssKb / 1024).toBeLessThan(320);
    expect(recordedInputs(project, 'p', 's')).toEqual({ 'data/big.bin': zerosHash(640 * MiB) });
  });

  it('input hashing - an input over 2 GiB is fingerprinted, not recorded as missing, and an append to it is seen by why', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  s:
    run: "echo ran > \${outputs.o}"
    inputs: [data/big.bin]
    outputs: { o: out/ran.txt }
`,
    });
    const big = project.write('data/big.bin', '');
    const size = OVER_2_GIB;
    truncateSync(big, size);
    utimesSync(big, OLD, OLD);
    const running = runCli(['run', 'p', '--json'], { cwd: project.root });
    // Worked out while the run hashes the file in its own process.
    const expected = zerosHash(size);
    const first = await running;
    expect(first.code, first.stderr).toBe(0);
    expect(stageEnds(first.stdout)).toEqual({ s: 'succeeded' });
    expect(recordedInputs(project, 'p', 's')).toEqual({ 'data/big.bin': expected });

    appendFileSync(big, 'x');
    utimesSync(big, OLD + 10, OLD + 10);
    expect(statSync(big).size).toBe(size + 1);
    const why = await runCli(['why', 'p', 's'], { cwd: project.root });
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toContain('s would run:');
    expect(why.stdout).toContain('input data/big.bin changed');
  });

  it('input hashing - an input that exists but cannot be read fails the stage with a message naming it, and runs nothing', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  s:
    run: "echo ran > \${outputs.o}"
    inputs: [data/unreadable]
    outputs: { o: out/ran.txt }
`,
    });
    project.write('data/.keep', '');
    // A regular file whose read fails with EIO for any reader, root included: the reader's own memory at address 0.
    symlinkSync('/proc/self/mem', project.path('data/unreadable'));
    const result = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(result.code).not.toBe(0);
    const end = events(result.stdout).find((e) => e.type === 'stage-end' && e.stage === 's');
    expect(end).toMatchObject({ status: 'failed', code: 'unreadable-input' });
    expect(String(end?.reason)).toMatch(/^cannot read data\/unreadable to fingerprint it: EIO/);
    expect(events(result.stdout).filter((e) => e.type === 'stage-start')).toEqual([]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('outputs - an output over 2 GiB without a schema is published and stamped, then up to date', async () => {
    project = tempProject({
      'pipelines/p.yaml': `pipeline: p
stages:
  s:
    run: "truncate -s ${OVER_2_GIB} \${outputs.o}"
    outputs: { o: out/big.bin }
`,
    });
    const first = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(first.code, first.stderr).toBe(0);
    expect(stageEnds(first.stdout)).toEqual({ s: 'succeeded' });
    expect(statSync(project.path('out/big.bin')).size).toBe(OVER_2_GIB);
    const second = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(second.code, second.stderr).toBe(0);
    expect(stageEnds(second.stdout)).toEqual({ s: 'fresh' });
  });
});
