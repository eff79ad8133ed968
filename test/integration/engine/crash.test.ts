import { readFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { events, runCli, stageEnds, startCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const SLOW_TASK = `import { createWriteStream } from 'node:fs';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'slow-json',
  params: z.object({ items: z.number().int(), delayMs: z.number() }),
  async run(ctx) {
    const out = createWriteStream(ctx.outputs.data);
    const chunk = 'x'.repeat(64 * 1024);
    out.write('{"items":[');
    for (let i = 0; i < ctx.params.items; i += 1) {
      out.write(\`\${i ? ',' : ''}"\${chunk}"\`);
      ctx.progress(i / ctx.params.items);
      await new Promise((r) => setTimeout(r, ctx.params.delayMs));
    }
    out.write(\`],"count":\${ctx.params.items}}\`);
    await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve(undefined))));
  },
});
`;

const SCHEMA = JSON.stringify({
  type: 'object',
  required: ['items', 'count'],
  properties: { items: { type: 'array', items: { type: 'string' } }, count: { type: 'integer' } },
});

function pipeline(): string {
  const stage = (name: string, items: number, needs: string[] = []) =>
    `  ${name}:\n    task: slow-json\n    with: { items: ${items}, delayMs: 15 }\n    outputs: { data: { path: out/${name}.json, schema: big } }\n${needs.length ? `    needs: [${needs.join(', ')}]\n` : ''}`;
  return `pipeline: crash\nstages:\n${stage('quick', 8)}${stage('s1', 60)}${stage('s2', 60)}${stage('s3', 60, ['quick'])}${stage('last', 10, ['s1', 's2', 's3'])}`;
}

/** Checks every output path: absent, or a complete artifact that satisfies the schema. */
function auditOutputs(root: string, names: string[]): string[] {
  const problems: string[] = [];
  for (const name of names) {
    let text: string;
    try {
      text = readFileSync(`${root}/out/${name}.json`, 'utf8');
    } catch {
      continue;
    }
    try {
      const data = JSON.parse(text) as { items: string[]; count: number };
      if (!Array.isArray(data.items) || data.items.length !== data.count) problems.push(`${name}: count mismatch`);
    } catch {
      problems.push(`${name}: partial JSON (${text.length} bytes)`);
    }
  }
  return problems;
}

it('crash safety - SIGKILL mid-run leaves no partial artifact and the rerun runs only unfinished stages', async () => {
  project = tempProject({ 'tasks/slow-json.ts': SLOW_TASK, 'schemas/big.schema.json': SCHEMA, 'pipelines/crash.yaml': pipeline() });
  const names = ['quick', 's1', 's2', 's3', 'last'];
  const child = startCli(['run', 'crash', '--json', '-j', '2'], { cwd: project.root });
  const problems: string[] = [];
  const finished = new Set<string>();
  const started = new Set<string>();
  let killed = false;
  const audit = setInterval(() => problems.push(...auditOutputs(project!.root, names)), 5);
  await new Promise<void>((resolve) => {
    let buffer = '';
    child.stdout?.on('data', (d: Buffer) => {
      buffer += d.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const e of events(lines.join('\n'))) {
        if (e.type === 'stage-start') started.add(e.stage as string);
        if (e.type === 'stage-end' && e.status === 'succeeded') finished.add(e.stage as string);
      }
      // Kill once a stage has finished while others are half-way through writing.
      if (!killed && finished.size >= 1 && [...started].some((s) => !finished.has(s))) {
        killed = true;
        process.kill(-(child.pid as number), 'SIGKILL');
      }
    });
    child.on('close', () => resolve());
  });
  clearInterval(audit);
  expect(killed).toBe(true);
  expect(problems).toEqual([]);
  expect(auditOutputs(project.root, names)).toEqual([]);

  const rerun = await runCli(['run', 'crash', '--json', '-j', '2'], { cwd: project.root });
  expect(rerun.code, rerun.stderr).toBe(0);
  const ends = stageEnds(rerun.stdout);
  for (const name of names) expect(ends[name], name).toBe(finished.has(name) ? 'fresh' : 'succeeded');
  expect(
    events(rerun.stdout)
      .filter((e) => e.type === 'stage-start')
      .map((e) => e.stage)
      .sort(),
  ).toEqual(names.filter((n) => !finished.has(n)).sort());
  expect(auditOutputs(project.root, names)).toEqual([]);
});

it('interrupt - SIGINT aborts running stages, exits 130 and leaves them stale', async () => {
  project = tempProject({
    'pipelines/p.yaml': `pipeline: p
stages:
  done: { run: "echo ok > \${outputs.o}", outputs: { o: out/done } }
  slow: { run: "echo partial > \${outputs.o}; sleep 30; echo rest >> \${outputs.o}", needs: [done], outputs: { o: out/slow } }
`,
  });
  const child = startCli(['run', 'p', '--json'], { cwd: project.root });
  let out = '';
  let interrupted = false;
  const code = await new Promise<number | null>((resolve) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (!interrupted && events(out).some((e) => e.type === 'stage-start' && e.stage === 'slow')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.on('close', (c) => resolve(c));
  });
  expect(code).toBe(130);
  expect(stageEnds(out)).toEqual({ done: 'succeeded', slow: 'aborted' });
  expect(readFileSync(project.path('out/done'), 'utf8')).toBe('ok\n');
  expect(() => readFileSync(project!.path('out/slow'))).toThrow();
  const rerun = await runCli(['plan', 'p'], { cwd: project.root });
  expect(rerun.stdout).toContain('run    slow  (it has never run (or its last run did not finish))');
  expect(rerun.stdout).not.toContain('run    done');
});

it('interrupt - SIGINT aborts an in-process task that ignores its signal at once, exit 130', async () => {
  project = tempProject({
    'tasks/stubborn.ts': `import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'stubborn', params: z.object({}), async run(ctx) {
  ctx.log('working');
  await new Promise((resolve) => setTimeout(resolve, 60_000));
} });
`,
    'pipelines/p.yaml': `pipeline: p
stages:
  slow: { task: stubborn, outputs: { o: out/slow } }
`,
  });
  const child = startCli(['run', 'p', '--json'], { cwd: project.root });
  let out = '';
  let interruptedAt = 0;
  const code = await new Promise<number | null>((resolve) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (!interruptedAt && events(out).some((e) => e.type === 'stage-log' && e.stage === 'slow')) {
        interruptedAt = Date.now();
        child.kill('SIGINT');
      }
    });
    child.on('close', (c) => resolve(c));
  });
  expect(code).toBe(130);
  expect(stageEnds(out)).toEqual({ slow: 'aborted' });
  // Far below the task's 60 s: the run did not wait for it.
  expect(Date.now() - interruptedAt).toBeLessThan(20_000);
});
