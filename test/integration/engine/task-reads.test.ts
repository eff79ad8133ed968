// A task's reads (TaskResult.reads): files it found only while running, kept as a make depfile
// keeps them. Its stage runs again when one of them changes, appears or goes away, and not otherwise.
import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { events, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => {
  project?.cleanup();
  project = undefined;
});

// follow: the files list.txt names, joined; the files it looked for are its reads.
const FOLLOW = `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'follow', params: z.object({ list: z.string() }), async run(ctx) {
  const named = readFileSync(ctx.params.list, 'utf8').split('\\n').filter(Boolean);
  writeFileSync(ctx.outputs.o, named.map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : '-')).join('|'));
  return { reads: named };
} });
`;

function followProject(): TempProject {
  return tempProject({
    'tasks/follow.ts': FOLLOW,
    'list.txt': 'notes/a.md\nnotes/b.md\n',
    'notes/a.md': 'A',
    'pipelines/p.yaml': `pipeline: p
stages:
  follow:
    task: follow
    with: { list: list.txt }
    inputs: [list.txt]
    outputs: { o: out/joined.txt }
  after:
    run: "cat out/joined.txt > \${outputs.o}"
    inputs: [out/joined.txt]
    outputs: { o: out/after.txt }
`,
  });
}

async function run(p: TempProject): Promise<{ ends: Record<string, string>; reasons: Record<string, string> }> {
  const result = await runCli(['run', 'p', '--json'], { cwd: p.root });
  expect(result.code, result.stderr).toBe(0);
  const starts = events(result.stdout).filter((e) => e.type === 'stage-start');
  return { ends: stageEnds(result.stdout), reasons: Object.fromEntries(starts.map((e) => [String(e.stage), String(e.reason)])) };
}

it('task reads - a file the task found while running, once edited, runs its stage again; untouched, nothing runs', async () => {
  project = followProject();
  expect((await run(project)).ends).toEqual({ follow: 'succeeded', after: 'succeeded' });
  expect((await run(project)).ends).toEqual({ follow: 'fresh', after: 'fresh' });
  project.write('notes/a.md', 'A2');
  const edited = await run(project);
  expect(edited.ends).toEqual({ follow: 'succeeded', after: 'succeeded' });
  expect(edited.reasons.follow).toBe('notes/a.md changed (read by its last run)');
  expect(readFileSync(project.path('out/after.txt'), 'utf8')).toBe('A2|-');
  expect((await run(project)).ends).toEqual({ follow: 'fresh', after: 'fresh' });
});

it('task reads - a file it looked for and did not find runs its stage again once it appears', async () => {
  project = followProject();
  await run(project);
  project.write('notes/b.md', 'B');
  const appeared = await run(project);
  expect(appeared.ends).toEqual({ follow: 'succeeded', after: 'succeeded' });
  expect(appeared.reasons.follow).toBe('notes/b.md changed (read by its last run)');
  expect(readFileSync(project.path('out/after.txt'), 'utf8')).toBe('A|B');
});
