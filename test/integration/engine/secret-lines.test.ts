// Issue #32, item 1: a key that reaches a log one line at a time (the cache signing key, a PEM),
// and the values of variables whose names say secret (`*_PRIVATE_KEY`, `*PASSWORD*`), are in no
// event, console line, events.jsonl or JUnit file, whatever the stage printed them with.
import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { events, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' ? [] : listFiles(path.join(dir, e.name))) : [path.join(dir, e.name)],
  );
}

/** A port nothing listens on: the remote cache is configured (its key registered) but down. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

it('events - every line of the cache signing key, and *_PRIVATE_KEY / *PASSWORD* values, are redacted wherever a stage prints them', async () => {
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const body = pem.split('\n').filter((l) => l && !l.startsWith('-----'));
  expect(body.length).toBeGreaterThan(0);
  const privateValue = 'plain-value-7Q2w9';
  const password = 'Winter2024isHere';
  project = tempProject({
    // The variable's name says nothing: the config naming it (signing_key_env) is what makes it secret.
    'refinery.config.yaml': 'remote_cache:\n  signing_key_env: CACHE_PEM\n',
    'tasks/keys.ts': `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';
export default defineTask({ name: 'keys', params: z.object({}), async run(ctx) {
  for (const line of (process.env.CACHE_PEM ?? '').split('\\n')) ctx.log('key line ' + line);
  ctx.log('deploy ' + process.env.DEPLOY_PRIVATE_KEY + ' db ' + process.env.PROD_DB_PASSWORD_RO);
  await writeFile(ctx.outputs.o, 'x');
  return { summary: 'signed with ' + (process.env.CACHE_PEM ?? '').split('\\n')[1] };
} });
`,
    'pipelines/p.yaml': `pipeline: p
stages:
  keys: { task: keys, outputs: { o: out/k.txt } }
  leak: { run: "printf '%s\\\\n' \\"$CACHE_PEM\\" \\"$DEPLOY_PRIVATE_KEY\\" \\"$PROD_DB_PASSWORD_RO\\"; exit 3", needs: [keys] }
`,
  });
  const env = {
    REFINERY_REMOTE_CACHE: `http://127.0.0.1:${await closedPort()}`,
    CACHE_PEM: pem,
    DEPLOY_PRIVATE_KEY: privateValue,
    PROD_DB_PASSWORD_RO: password,
  };
  const json = await runCli(['run', 'p', '--json', '--junit', 'reports/junit.xml'], { cwd: project.root, env });
  const plain = await runCli(['run', 'p', '-v', '--force'], { cwd: project.root, env });
  expect(json.code, json.stderr).toBe(1);
  expect(plain.code).toBe(1);
  // The lines were printed and recorded, each replaced.
  const logged = events(json.stdout).filter((e) => e.type === 'stage-log' && e.stage === 'keys');
  expect(logged.map((e) => e.message)).toContain('key line [redacted:secret_value]');
  expect(logged.map((e) => e.message)).toContain('deploy [redacted:secret_value] db [redacted:secret_value]');
  const leakEnd = events(json.stdout).find((e) => e.type === 'stage-end' && e.stage === 'leak');
  expect(leakEnd?.reason).toMatch(/exit code 3: .*\[redacted:secret_value\]/s);

  for (const secret of [...body, privateValue, password]) {
    for (const out of [json, plain]) expect(out.stdout + out.stderr, secret).not.toContain(secret);
    const files = listFiles(project.root).filter((f) => readFileSync(f).includes(secret));
    expect(
      files.map((f) => path.relative(project!.root, f)),
      secret,
    ).toEqual([]);
  }
  expect(listFiles(project.root).some((f) => f.endsWith('events.jsonl'))).toBe(true);
}, 60_000);
