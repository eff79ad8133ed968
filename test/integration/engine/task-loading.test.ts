import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { WatchProcess } from '../watch/watch-process.ts';

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;

afterEach(async () => {
  await watcher?.stop();
  watcher = undefined;
  project?.cleanup();
  project = undefined;
});

/** A task as the README shows it: ESM syntax, `refinery/task`, zx's `$`. */
function wordCountTask(tag: string): string {
  return `import { readFile, writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'word-count',
  params: z.object({ file: z.string() }),
  async run(ctx) {
    const words = (await readFile(ctx.params.file, 'utf8')).split(/\\s+/).filter(Boolean);
    const echoed = (await ctx.$\`echo ${tag}\`).stdout.trim();
    await writeFile(ctx.outputs.counts, JSON.stringify({ words: words.length, tag: echoed }));
    return { summary: \`\${words.length} words\` };
  },
});
`;
}

const PIPELINE = `pipeline: p
stages:
  count:
    task: word-count
    with: { file: src/a.txt }
    inputs: [src/a.txt]
    outputs: { counts: out/counts.json }
`;

/** A project whose package.json is as `npm init -y` writes it (`"type": "commonjs"`), or has no type at all. */
function projectOfType(type: 'commonjs' | 'none' | 'module'): TempProject {
  const p = tempProject({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'one two three\n', 'tasks/word-count.ts': wordCountTask('v1') });
  const pkg = { name: 'user-project', version: '1.0.0', ...(type === 'none' ? {} : { type }) };
  p.write('package.json', `${JSON.stringify(pkg, null, 2)}\n`);
  return p;
}

function counts(p: TempProject): { words: number; tag: string } {
  return JSON.parse(readFileSync(p.path('out/counts.json'), 'utf8')) as { words: number; tag: string };
}

describe('task loading', () => {
  it.each(['commonjs', 'none', 'module'] as const)('task loading - a TypeScript task runs whatever the package type (%s)', async (type) => {
    project = projectOfType(type);
    const r = await runCli(['run', 'p', '--json'], { cwd: project.root });
    expect(r.stderr).not.toContain('cannot load task');
    expect(stageEnds(r.stdout)).toEqual({ count: 'succeeded' });
    expect(r.code).toBe(0);
    expect(counts(project)).toEqual({ words: 3, tag: 'v1' });
  });

  it('task loading - .mjs and CommonJS .js tasks in a commonjs project import refinery/task', async () => {
    project = projectOfType('commonjs');
    project.write(
      'tasks/esm-task.mjs',
      `import { writeFileSync } from 'node:fs';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'esm-task', params: z.object({}), async run(ctx) { writeFileSync(ctx.outputs.o, JSON.stringify({ from: 'mjs' })); } });
`,
    );
    project.write(
      'tasks/cjs-task.js',
      `const { writeFileSync } = require('node:fs');
const { defineTask, z } = require('refinery/task');
module.exports = defineTask({ name: 'cjs-task', params: z.object({}), async run(ctx) { writeFileSync(ctx.outputs.o, JSON.stringify({ from: 'js' })); } });
`,
    );
    project.write(
      'pipelines/kinds.yaml',
      `pipeline: kinds
stages:
  m: { task: esm-task, outputs: { o: out/m.json } }
  c: { task: cjs-task, outputs: { o: out/c.json } }
`,
    );
    const r = await runCli(['run', 'kinds', '--json', '-k'], { cwd: project.root });
    expect(r.stderr).not.toContain('cannot load task');
    expect(stageEnds(r.stdout)).toEqual({ m: 'succeeded', c: 'succeeded' });
    expect(['m', 'c'].map((s) => JSON.parse(readFileSync(project?.path(`out/${s}.json`) ?? '', 'utf8')).from)).toEqual(['mjs', 'js']);
  });

  it('task loading - watch runs an edited task anew in a commonjs project', async () => {
    project = projectOfType('commonjs');
    watcher = new WatchProcess([], project.root);
    await watcher.nth(1, 'stage-end', 'count', 'succeeded');
    expect(counts(project).tag).toBe('v1');
    project.write('tasks/word-count.ts', wordCountTask('v2'));
    await watcher.nth(2, 'stage-end', 'count', 'succeeded');
    expect(counts(project).tag).toBe('v2');
  });

  it('task - a task file that cannot be loaded is named in a one-line error, exit 1, no stack trace', async () => {
    project = projectOfType('commonjs');
    project.write('tasks/broken.ts', `export const notDefault = 1;\n`);
    const r = await runCli(['task', 'broken'], { cwd: project.root });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`refinery task: cannot load task 'broken' from ${project.path('tasks/broken.ts')}`);
    expect(r.stderr).toContain('must `export default defineTask');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});
