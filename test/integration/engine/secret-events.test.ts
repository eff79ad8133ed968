// Issue #10, item 5: the event bus is the one door to the console, events.jsonl, --json, JUnit and
// MQTT; whatever a stage prints or reports is cleaned of secrets there, whoever produced it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { events, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

const TOKEN = 'deploy9Token8Value7Plain'; // a secret-looking variable's value: no key shape
// Handed to the stages in variables whose names do not look secret: found by their shape alone.
const BEARER = 'AbC123xyz456QWE789rty';
const GOOGLE = 'AIzaSy0123456789abcdefghijABCDEFGHIJ_-';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' ? [] : listFiles(path.join(dir, e.name))) : [path.join(dir, e.name)],
  );
}

it('events - secrets a stage prints, logs or reports reach no event, console line, events.jsonl or JUnit file', async () => {
  project = tempProject({
    'tasks/chatty.ts': `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'chatty', params: z.object({}), async run(ctx) {
  ctx.log('token is ' + process.env.DEPLOY_TOKEN);
  ctx.progress(0.5, 'google ' + process.env.NOTE_G);
  ctx.report({ kind: 'warning', message: 'sent Authorization: Bearer ' + process.env.NOTE_B });
  await writeFile(ctx.outputs.o, 'x');
  return { summary: 'done with ' + process.env.DEPLOY_TOKEN, warnings: ['again ' + process.env.NOTE_G] };
} });
`,
    'pipelines/p.yaml': `pipeline: p
stages:
  chatty: { task: chatty, outputs: { o: out/c.txt } }
  leak: { run: "echo using $DEPLOY_TOKEN; echo \\"Authorization: Bearer $NOTE_B\\" >&2; exit 3", needs: [chatty] }
`,
  });
  const env = { DEPLOY_TOKEN: TOKEN, NOTE_B: BEARER, NOTE_G: GOOGLE };
  const plain = await runCli(['run', 'p', '-v', '--junit', 'reports/junit.xml'], { cwd: project.root, env });
  const json = await runCli(['run', 'p', '--json', '--force'], { cwd: project.root, env });
  expect(plain.code).toBe(1);
  expect(json.code).toBe(1);
  // The stage's failure still says what happened, with the secret replaced.
  const leakEnd = events(json.stdout).find((e) => e.type === 'stage-end' && e.stage === 'leak');
  expect(leakEnd?.reason).toMatch(/exit code 3: .*Bearer \[redacted:bearer_token\]/);
  const logged = events(json.stdout).filter((e) => e.type === 'stage-log' && e.stage === 'chatty');
  expect(logged.map((e) => e.message)).toContain('token is [redacted:secret_value]');

  for (const secret of [TOKEN, BEARER, GOOGLE]) {
    for (const out of [plain, json]) expect(out.stdout + out.stderr).not.toContain(secret);
    const files = listFiles(project.root).filter((f) => readFileSync(f).includes(secret));
    expect(files.map((f) => path.relative(project!.root, f))).toEqual([]);
  }
  expect(listFiles(project.root).some((f) => f.endsWith('events.jsonl'))).toBe(true);
  expect(readFileSync(project.path('reports/junit.xml'), 'utf8')).toContain('[redacted:bearer_token]');
});
