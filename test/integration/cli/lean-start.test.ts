import { readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { makeCertificates, OPENSSL } from '../../helpers/certificates.ts';
import { runCliProgram, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout, systemTool } from '../../helpers/system-tools.ts';

// NODE_EXTRA_CA_CERTS costs every Node start the parse of the file it names. Where the last run
// of a pipeline opened no TLS connection of refinery's own, the next `refinery run` (started as
// a program: /bin/sh, then the quick client in perl) starts Node without it and puts it back
// for everything Node starts; a run that needs the certificates after all starts again with
// them. These tests trust a server only through the variable, so a task's connection succeeds
// only in a process that read it.

const PERL = systemTool('perl');
let certs: ReturnType<typeof makeCertificates>;
let certDir: string;
let server: Server;
let url: string;
let project: TempProject | undefined;

beforeAll(async () => {
  if (!OPENSSL.path || !PERL.path) return;
  certDir = mkdtempSync(path.join(os.tmpdir(), 'refinery-lean-start-'));
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

// Each command writes what it was given of both variables.
const RUN_ONLY = `pipeline: p
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }
  env: { run: "printf '%s|%s\\\\n' \\"$NODE_EXTRA_CA_CERTS\\" \\"$REFINERY_DEFERRED_CA_CERTS\\" > \${outputs.o}", inputs: [out/a.txt], outputs: { o: out/env.txt } }
`;

const WITH_TASK = `${RUN_ONLY}  fetch:
    task: fetch-page
    with: { url: "${'${params.url}'}" }
    inputs: [out/a.txt]
    outputs: { page: out/page.txt }
params:
  url: { type: string }
`;

const FETCH_TASK = `import { writeFile } from 'node:fs/promises';
import { defineTask, z } from 'refinery/task';

export default defineTask({
  name: 'fetch-page',
  params: z.object({ url: z.string() }),
  async run(ctx) {
    const response = await fetch(ctx.params.url);
    await writeFile(ctx.outputs.page, await response.text());
  },
});
`;

function env(): NodeJS.ProcessEnv {
  return { NODE_EXTRA_CA_CERTS: certs.ca, REFINERY_FROM_DIST: '1' };
}

const STARTED_LEAN = 'started without the certificates NODE_EXTRA_CA_CERTS names';
const STARTED_AGAIN = 'starting again with the certificates NODE_EXTRA_CA_CERTS names';

describe('lean start', () => {
  it('lean start - the next run of a run-only pipeline starts Node without the certificates; its commands still have the variable', async ({
    skip,
  }) => {
    if (skipWithout(PERL) || skipWithout(OPENSSL)) skip();
    project = tempProject({ 'pipelines/p.yaml': RUN_ONLY, 'src/a.txt': 'a1\n' });
    const first = await runCliProgram(['run', 'p', '-v'], { cwd: project.root, env: env() });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain(STARTED_LEAN);
    expect(existsSync(project.path('.refinery/state/lean-start'))).toBe(true);

    project.write('src/a.txt', 'a2\n');
    const second = await runCliProgram(['run', 'p', '-v'], { cwd: project.root, env: env() });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain(STARTED_LEAN);
    expect(readFileSync(project.path('out/env.txt'), 'utf8')).toBe(`${certs.ca}|\n`);

    // Without the variable, the marker changes nothing: Node starts as always.
    project.write('src/a.txt', 'a3\n');
    const unset = await runCliProgram(['run', 'p', '-v'], { cwd: project.root, env: { NODE_EXTRA_CA_CERTS: '', REFINERY_FROM_DIST: '1' } });
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.stderr).not.toContain(STARTED_LEAN);
    expect(readFileSync(project.path('out/env.txt'), 'utf8')).toBe('|\n');
  }, 60_000);

  it('lean start - a pipeline that gains a task stage starts again with the certificates, and the task reaches a server only they vouch for', async ({
    skip,
  }) => {
    if (skipWithout(PERL) || skipWithout(OPENSSL)) skip();
    project = tempProject({ 'pipelines/p.yaml': RUN_ONLY, 'src/a.txt': 'a1\n', 'tasks/fetch-page.ts': FETCH_TASK });
    const first = await runCliProgram(['run', 'p'], { cwd: project.root, env: env() });
    expect(first.code, first.stderr).toBe(0);
    expect(existsSync(project.path('.refinery/state/lean-start'))).toBe(true);

    project.write('pipelines/p.yaml', WITH_TASK);
    const gained = await runCliProgram(['run', 'p', '-v', '--param', `url=${url}`], { cwd: project.root, env: env() });
    expect(gained.code, gained.stderr).toBe(0);
    expect(gained.stderr).toContain(STARTED_LEAN);
    expect(gained.stderr).toContain(STARTED_AGAIN);
    expect(readFileSync(project.path('out/page.txt'), 'utf8')).toBe('hello over TLS\n');
    // A pipeline with a task stage leaves no marker: its next run starts with the certificates at once.
    expect(existsSync(project.path('.refinery/state/lean-start'))).toBe(false);
    project.write('src/a.txt', 'a2\n');
    const next = await runCliProgram(['run', 'p', '-v', '--param', `url=${url}`], { cwd: project.root, env: env() });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toContain(STARTED_LEAN);
    expect(next.stderr).not.toContain(STARTED_AGAIN);
  }, 60_000);

  it('lean start - a remote cache configured since the marker was written starts the run again with the certificates', async ({ skip }) => {
    if (skipWithout(PERL) || skipWithout(OPENSSL)) skip();
    project = tempProject({ 'pipelines/p.yaml': RUN_ONLY, 'src/a.txt': 'a1\n' });
    const first = await runCliProgram(['run', 'p'], { cwd: project.root, env: env() });
    expect(first.code, first.stderr).toBe(0);
    project.write('src/a.txt', 'a2\n');
    const cached = await runCliProgram(['run', 'p', '-v', '--remote-cache', 'https://127.0.0.1:9/'], { cwd: project.root, env: env() });
    expect(cached.stderr).toContain(STARTED_AGAIN);
    expect(cached.code, cached.stderr).toBe(0);
    expect(existsSync(project.path('.refinery/state/lean-start'))).toBe(false);
  }, 60_000);
});
