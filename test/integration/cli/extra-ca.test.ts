import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { makeCertificates, OPENSSL } from '../../helpers/certificates.ts';
import { runCliProgram, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';

// NODE_EXTRA_CA_CERTS as a company network sets it: the server below is trusted only through
// it, so a task's connection succeeds only in a process that read it, and every command a run
// starts must see the variable as the user set it, on the first run and on the next.

let certs: ReturnType<typeof makeCertificates>;
let certDir: string;
let server: Server;
let url: string;
let project: TempProject | undefined;

beforeAll(async () => {
  if (!OPENSSL.path) return;
  certDir = mkdtempSync(path.join(os.tmpdir(), 'refinery-extra-ca-'));
  certs = makeCertificates(certDir);
  server = createServer({ key: readFileSync(certs.serverKey), cert: readFileSync(certs.server) }, (_req, res) => {
    res.end('hello over TLS\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  if (server) await new Promise((resolve) => server.close(resolve));
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

afterEach(() => {
  project?.cleanup();
  project = undefined;
});

const PIPELINE = `pipeline: p
params:
  url: { type: string }
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }
  env: { run: "printf '%s\\\\n' \\"$NODE_EXTRA_CA_CERTS\\" > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/env.txt } }
  fetch:
    task: fetch-page
    with: { url: "\${params.url}" }
    inputs: [out/a.txt]
    outputs: { page: out/page.txt }
`;

const FETCH_TASK = `import { readFile, writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'fetch-page',
  params: z.object({ url: z.string() }),
  async run(ctx) {
    const response = await fetch(ctx.params.url);
    await writeFile(ctx.outputs.page, (await readFile('out/a.txt', 'utf8')) + (await response.text()));
  },
});
`;

describe('NODE_EXTRA_CA_CERTS', () => {
  it('extra CA certificates - a task reaches a server only they vouch for, and commands see the variable, run after run', async ({
    skip,
  }) => {
    if (skipWithout(OPENSSL)) skip();
    project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'src/a.txt': 'a1\n', 'tasks/fetch-page.ts': FETCH_TASK });
    const env = { NODE_EXTRA_CA_CERTS: certs.ca };
    for (const content of ['a1\n', 'a2\n']) {
      project.write('src/a.txt', content);
      const r = await runCliProgram(['run', 'p', '--param', `url=${url}`], { cwd: project.root, env });
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(project.path('out/page.txt'), 'utf8')).toBe(`${content}hello over TLS\n`);
      expect(readFileSync(project.path('out/env.txt'), 'utf8')).toBe(`${certs.ca}\n`);
    }
    // Without it, the same server is not trusted: the test above could fail.
    project.write('src/a.txt', 'a3\n');
    const untrusted = await runCliProgram(['run', 'p', '--param', `url=${url}`], { cwd: project.root, env: { NODE_EXTRA_CA_CERTS: '' } });
    expect(untrusted.code).toBe(1);
  }, 60_000);
});
