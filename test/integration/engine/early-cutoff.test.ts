// Early cutoff: a stage runs only when the content of what it reads, its params or its code
// changed. An upstream that runs again and writes the same bytes does not start its downstream
// (run, watch and plan agree), and `refinery why` names what changed: the input, the param with
// its old and new value (hidden when it looks secret), or the task file.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
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

// normalize drops blank lines; words reads its output as an input; tally only `needs:` it.
const NOTES = `pipeline: notes
stages:
  normalize:
    run: "sed '/^$/d' notes/note.md > \${outputs.clean}"
    inputs: [notes/note.md]
    outputs: { clean: out/clean.md }
  words:
    run: "wc -w < out/clean.md > \${outputs.count}"
    inputs: [out/clean.md]
    outputs: { count: out/words.txt }
  tally:
    run: "cat out/clean.md out/clean.md > \${outputs.twice}"
    needs: [normalize]
    outputs: { twice: out/twice.md }
`;

function notesProject(): TempProject {
  return tempProject({ 'pipelines/notes.yaml': NOTES, 'notes/note.md': 'one two\nthree\n' });
}

async function run(p: TempProject, ...args: string[]): Promise<Record<string, string>> {
  const result = await runCli(['run', 'notes', '--json', ...args], { cwd: p.root });
  expect(result.code, result.stderr).toBe(0);
  return stageEnds(result.stdout);
}

it('early cutoff - identical upstream output skips downstream', async () => {
  project = notesProject();
  expect(await run(project)).toEqual({ normalize: 'succeeded', words: 'succeeded', tally: 'succeeded' });
  project.write('notes/note.md', 'one two\n\nthree\n');
  expect(await run(project)).toEqual({ normalize: 'succeeded', words: 'fresh', tally: 'fresh' });
  expect(readFileSync(project.path('out/words.txt'), 'utf8').trim()).toBe('3');
  // And nothing is left for the next run.
  expect(await run(project)).toEqual({ normalize: 'fresh', words: 'fresh', tally: 'fresh' });
});

it('early cutoff - changed upstream output runs downstream', async () => {
  project = notesProject();
  await run(project);
  project.write('notes/note.md', 'one two\n\nthree four\n');
  expect(await run(project)).toEqual({ normalize: 'succeeded', words: 'succeeded', tally: 'succeeded' });
  expect(readFileSync(project.path('out/words.txt'), 'utf8').trim()).toBe('4');
  expect(readFileSync(project.path('out/twice.md'), 'utf8')).toBe('one two\nthree four\none two\nthree four\n');
  project.cleanup();
  // Also when the upstream ran again with the same inputs, params and code (for its missing
  // output) and wrote something new: roll writes something new each time; use only `needs:` it.
  project = tempProject({
    'pipelines/dice.yaml': `pipeline: dice
stages:
  roll: { run: "od -An -N8 -tu8 /dev/urandom > \${outputs.n}", outputs: { n: out/n.txt } }
  use: { run: "cat out/n.txt > \${outputs.copy}", needs: [roll], outputs: { copy: out/copy.txt } }
`,
  });
  const dir = project.root;
  const dice = async (): Promise<Record<string, string>> => stageEnds((await runCli(['run', 'dice', '--json'], { cwd: dir })).stdout);
  expect(await dice()).toEqual({ roll: 'succeeded', use: 'succeeded' });
  rmSync(project.path('out/n.txt'));
  expect(await dice()).toEqual({ roll: 'succeeded', use: 'succeeded' });
  expect(readFileSync(project.path('out/copy.txt'), 'utf8')).toBe(readFileSync(project.path('out/n.txt'), 'utf8'));
});

it('early cutoff - plan says a downstream runs only if its upstream writes different output', async () => {
  project = notesProject();
  await run(project);
  project.write('notes/note.md', 'one two\n\nthree\n');
  const plan = await runCli(['plan', 'notes'], { cwd: project.root });
  expect(plan.stdout).toBe(
    [
      'run    normalize  (input notes/note.md changed)',
      'run?   words  (runs only if upstream normalize writes different output)',
      'run?   tally  (runs only if upstream normalize writes different output)',
      '',
      '1 of 3 stages would run; 2 more only if upstream output changes.',
      '',
    ].join('\n'),
  );
  const why = await runCli(['why', 'notes', 'words'], { cwd: project.root });
  expect(why.stdout).toBe(
    'words would run only if upstream output changes:\n  - runs only if upstream normalize writes different output\n  needs: normalize\n',
  );
});

it('early cutoff - watch skips the downstream of an upstream that wrote the same bytes', async () => {
  project = notesProject();
  watcher = new WatchProcess([], project.root);
  await watcher.nth(1, 'run-end');
  project.write('notes/note.md', 'one two\n\n\nthree\n');
  await watcher.nth(2, 'run-end');
  const runId = watcher.events.filter((e) => e.type === 'run-start')[1]?.runId;
  const started = watcher.events.filter((e) => e.type === 'stage-start' && e.runId === runId).map((e) => e.stage);
  expect(started).toEqual(['normalize']);
  project.write('notes/note.md', 'one\n');
  await watcher.nth(3, 'run-end');
  const third = watcher.events.filter((e) => e.type === 'run-start')[2]?.runId;
  const startedThird = watcher.events.filter((e) => e.type === 'stage-start' && e.runId === third).map((e) => e.stage);
  expect(startedThird.sort()).toEqual(['normalize', 'tally', 'words']);
});

it('why - names the changed input', async () => {
  project = notesProject();
  await run(project);
  project.write('notes/note.md', 'one two\nthree four\n');
  // Only normalize runs: out/clean.md now differs from what words last read.
  expect(await run(project, '--only', 'normalize')).toEqual({ normalize: 'succeeded' });
  const why = await runCli(['why', 'notes', 'words'], { cwd: project.root });
  expect(why.stdout).toBe('words would run:\n  - input out/clean.md changed\n  needs: normalize\n');
});

const PARAMS_PIPELINE = `pipeline: ask
params:
  model: { type: string, default: small }
  api_key: { type: string, default: "" }
stages:
  ask:
    task: echo-params
    with: { model: "\${params.model}", api_key: "\${params.api_key}", note: notes/q.md }
    inputs: [notes/q.md]
    outputs: { out: out/ask.json }
`;

const ECHO_TASK = `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'echo-params',
  params: z.object({ model: z.string(), api_key: z.string(), note: z.string() }),
  async run(ctx) {
    await writeFile(ctx.outputs.out, JSON.stringify({ model: ctx.params.model }));
  },
});
`;

it('why - names the changed param with old and new value', async () => {
  project = tempProject({ 'pipelines/ask.yaml': PARAMS_PIPELINE, 'tasks/echo-params.ts': ECHO_TASK, 'notes/q.md': 'why?\n' });
  const secret = 'hunter2-first-secret-value';
  const first = await runCli(['run', 'ask', '-p', 'model=small', '-p', `api_key=${secret}`], { cwd: project.root });
  expect(first.code, first.stderr).toBe(0);
  const why = await runCli(['why', 'ask', 'ask', '-p', 'model=large', '-p', 'api_key=another-secret-value'], { cwd: project.root });
  expect(why.stdout).toBe(
    'ask would run:\n  - param with.api_key changed (value hidden)\n  - param with.model changed: "small" -> "large"\n',
  );
  // A secret-looking param's value is kept out of the journal too.
  expect(readFileSync(project.path('.refinery/state/ask.jsonl'), 'utf8')).not.toContain(secret);
});

it('why - names the changed task file', async () => {
  project = tempProject({ 'pipelines/ask.yaml': PARAMS_PIPELINE, 'tasks/echo-params.ts': ECHO_TASK, 'notes/q.md': 'why?\n' });
  expect((await runCli(['run', 'ask'], { cwd: project.root })).code).toBe(0);
  project.write('tasks/echo-params.ts', `${ECHO_TASK}// changed\n`);
  const why = await runCli(['why', 'ask', 'ask'], { cwd: project.root });
  expect(why.stdout).toBe('ask would run:\n  - task file tasks/echo-params.ts changed\n');
});

it('early cutoff - a record of an earlier refinery with the same reads is written again with the new fingerprint, not rerun', async () => {
  project = notesProject();
  await run(project);
  // As an earlier refinery wrote it: every upstream's fingerprint in `deps`, and a fingerprint made with them.
  const journal = project.path('.refinery/state/notes.jsonl');
  const lines = readFileSync(journal, 'utf8').trim().split('\n');
  const old = lines.map((line) => {
    const entry = JSON.parse(line);
    if (entry.s !== 'words' || entry.f === null) return line;
    entry.f = 'fingerprint-of-an-earlier-form';
    entry.r.fingerprint = entry.f;
    entry.r.parts.deps = { normalize: 'fingerprint-of-normalize' };
    delete entry.r.parts.values;
    return JSON.stringify(entry);
  });
  writeFileSync(journal, `${old.join('\n')}\n`);
  // The note saved again as it was: the run checks the stages it reaches (nothing changed, no run checks them).
  project.write('notes/note.md', 'one two\nthree\n');
  expect(await run(project)).toEqual({ normalize: 'fresh', words: 'fresh', tally: 'fresh' });
  const last = readFileSync(journal, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((e) => e.s === 'words')
    .pop();
  expect(last.f).not.toBe('fingerprint-of-an-earlier-form');
  expect(last.r.parts.deps).toEqual({});
});
