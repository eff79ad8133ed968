// The server down, stopped mid-run, refusing writes or too small for a blob never fails a run: a
// warning, then the local path. A read-only client never writes. Credentials in the URL reach the
// server as Basic auth; a stage whose params name the project folder is not shared.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProject, events, runCli, startCli, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import { freePort } from '../../helpers/mosquitto.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { fingerprints, runEnd, stageStarts, warnings } from './clones.ts';
import { sha256, stageKey } from './entries.ts';

const projects: TempProject[] = [];
afterAll(() => {
  for (const p of projects) p.cleanup();
});

function track(p: TempProject): TempProject {
  projects.push(p);
  return p;
}

function run(p: TempProject, env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  return runCli(['run', 'demo', '--json', ...args], { cwd: p.root, env });
}

const WAITING_PIPELINE = `pipeline: demo
stages:
  a: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }
  b:
    # Waits for the test to stop the cache server, so the rest of the run happens without it.
    run: "while [ ! -f go ]; do sleep 0.05; done; cat out/a.txt out/a.txt > \${outputs.o}"
    inputs: [out/a.txt]
    outputs: { o: out/b.txt }
  c: { run: "cat out/b.txt src/a.txt > \${outputs.o}", inputs: [out/b.txt], outputs: { o: out/c.txt } }
`;

describe.skipIf(skipWithout(NGINX))('remote cache on nginx: failures never fail a run', () => {
  let ngx: NginxCache;
  beforeAll(async () => {
    ngx = await startNginxCache();
  });
  afterAll(async () => {
    await ngx?.dispose();
  });

  it('server stopped mid-run - warnings, and a complete local run', async () => {
    const p = track(tempProject({ 'pipelines/demo.yaml': WAITING_PIPELINE, 'src/a.txt': 'alpha\n' }));
    const child = startCli(['run', 'demo', '--json'], { cwd: p.root, env: { REFINERY_REMOTE_CACHE: `${ngx.url}/midrun` } });
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stdout?.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (events(stdout).some((e) => e.type === 'stage-start' && e.stage === 'b')) resolve();
      });
    });
    await ngx.stop();
    p.write('go', '');
    const code = await exited;
    await ngx.start();
    expect(code, stderr).toBe(0);
    const result = { code, signal: null, stdout, stderr };
    expect(
      Object.fromEntries(
        events(stdout)
          .filter((e) => e.type === 'stage-end')
          .map((e) => [e.stage, e.status]),
      ),
    ).toEqual({ a: 'succeeded', b: 'succeeded', c: 'succeeded' });
    expect(readFileSync(p.path('out/c.txt'), 'utf8')).toBe('alpha\nalpha\nalpha\n');
    const said = warnings(result);
    expect(said.length).toBeGreaterThanOrEqual(1);
    expect(said.every((w) => w.startsWith('remote cache: '))).toBe(true);
    expect(said.join('\n')).toMatch(/ECONNREFUSED|off for the rest of this run/);
    // a's upload raced the stop (it runs in the background); b's and c's came after it.
    const fp = fingerprints(p, 'demo');
    const stored = (stage: string): boolean => existsSync(path.join(ngx.root, 'midrun', 'ac', stageKey(fp[stage] as string)));
    expect(stored('b')).toBe(false);
    expect(stored('c')).toBe(false);
    expect(runEnd(result).remote).toMatchObject({ uploaded: stored('a') ? 1 : 0, problems: said.length });
  });

  it('server down from the start - one warning, the cache is off for the run, and the run passes', async () => {
    const p = track(demoProject());
    const started = Date.now();
    const result = await run(p, { REFINERY_REMOTE_CACHE: `http://127.0.0.1:${await freePort()}` });
    expect(result.code, result.stderr).toBe(0);
    expect(stageStarts(result)).toEqual(['a', 'b']);
    expect(warnings(result)).toEqual([
      expect.stringMatching(
        /^remote cache: GET ac\/[0-9a-f]{12}… failed: ECONNREFUSED; the remote cache is off for the rest of this run; a runs here$/,
      ),
    ]);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('one blob too large for the server (413) - no action-cache entry for that stage, the others are stored, the run passes', async () => {
    const small = await startNginxCache({ maxBody: '1k' });
    try {
      const big = 'x'.repeat(5000);
      const p = track(
        tempProject({
          'pipelines/demo.yaml': `pipeline: demo
stages:
  big: { run: "cat src/big.txt > \${outputs.o}; cat src/a.txt > \${outputs.copy}", inputs: [src/big.txt, src/a.txt], outputs: { o: out/big.txt, copy: out/copy.txt } }
  tiny: { run: "cat src/a.txt > \${outputs.o}", inputs: [src/a.txt], outputs: { o: out/tiny.txt } }
`,
          'src/big.txt': big,
          'src/a.txt': 'alpha\n',
        }),
      );
      const result = await run(p, { REFINERY_REMOTE_CACHE: small.url });
      expect(result.code, result.stderr).toBe(0);
      expect(warnings(result)).toEqual([
        expect.stringMatching(
          new RegExp(`^remote cache: PUT cas/${sha256(big)} answered HTTP 413; its action-cache entry was not written$`),
        ),
      ]);
      const fp = fingerprints(p, 'demo');
      const puts = small.requests().filter((r) => r.method === 'PUT');
      expect(puts.some((r) => r.uri === `/ac/${stageKey(fp.big as string)}`)).toBe(false);
      expect(puts.find((r) => r.uri === `/ac/${stageKey(fp.tiny as string)}`)?.status).toBe(201);
      expect(runEnd(result).remote).toMatchObject({ uploaded: 1, problems: 1 });
    } finally {
      await small.dispose();
    }
  });

  it('max_blob_mb - a blob over the limit is not uploaded, and an entry naming one is not downloaded', async () => {
    const pipeline =
      'pipeline: demo\nstages:\n  big: { run: "cat src/big.txt > ${outputs.o}", inputs: [src/big.txt], outputs: { o: out/big.txt } }\n';
    const files = { 'pipelines/demo.yaml': pipeline, 'src/big.txt': 'y'.repeat(4000) };
    const limited = 'remote_cache: { max_blob_mb: 0.001 }\n';
    const env = { REFINERY_REMOTE_CACHE: `${ngx.url}/limits` };
    const small = track(tempProject({ ...files, 'refinery.config.yaml': limited }));
    const skipped = await run(small, env);
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(warnings(skipped)).toEqual(['remote cache: not stored: out/big.txt is 4000 bytes, over remote_cache.max_blob_mb']);
    const writer = track(tempProject(files));
    expect(runEnd(await run(writer, env)).remote).toMatchObject({ uploaded: 1 });
    const before = ngx.requests().length;
    const reader = track(tempProject({ ...files, 'refinery.config.yaml': limited }));
    const refused = await run(reader, env);
    expect(refused.code, refused.stderr).toBe(0);
    expect(warnings(refused)).toEqual([
      'remote cache: refused the entry for stage big: out/big.txt is 4000 bytes, over remote_cache.max_blob_mb; it runs here',
      // Having run it here, it does not store it either.
      'remote cache: not stored: out/big.txt is 4000 bytes, over remote_cache.max_blob_mb',
    ]);
    expect(stageStarts(refused)).toEqual(['big']);
    // Only the action-cache entry was read: the blob's size was checked before fetching it.
    expect(
      ngx
        .requests()
        .slice(before)
        .filter((r) => r.method === 'GET')
        .map((r) => r.uri.split('/')[2]),
    ).toEqual(['ac']);
  });

  it('params naming the project folder - the stage runs and is not shared, with a warning that says why', async () => {
    const p = track(
      tempProject({
        'pipelines/demo.yaml':
          'pipeline: demo\nparams:\n  src: { type: string }\nstages:\n  a: { run: "cat ${params.src} > ${outputs.o}", inputs: ["${params.src}"], outputs: { o: out/a.txt } }\n',
        'src/a.txt': 'alpha\n',
      }),
    );
    const before = ngx.requests().length;
    const result = await run(p, { REFINERY_REMOTE_CACHE: `${ngx.url}/local` }, '--param', `src=${p.path('src/a.txt')}`);
    expect(result.code, result.stderr).toBe(0);
    expect(warnings(result)).toEqual([
      'remote cache: not shared: its params, command or env name the project folder by its absolute path; give paths relative to the project to share its result',
    ]);
    expect(ngx.requests().slice(before)).toEqual([]);
  });
});

describe.skipIf(skipWithout(NGINX))('remote cache on nginx: who may write', () => {
  let ngx: NginxCache;
  const writer = { user: 'ci', password: 'ci-writer-s3cret' };
  beforeAll(async () => {
    ngx = await startNginxCache({ writers: writer });
  });
  afterAll(async () => {
    await ngx?.dispose();
  });

  it('credentials in the URL - sent as Basic auth, never printed; a read-only client never writes; an anonymous writer gets 401, reported, not fatal', async () => {
    const withCredentials = ngx.url.replace('http://', `http://${writer.user}:${writer.password}@`);
    const a = track(demoProject());
    const first = await run(a, { REFINERY_REMOTE_CACHE: withCredentials });
    expect(first.code, first.stderr).toBe(0);
    expect(runEnd(first).remote).toMatchObject({ url: ngx.url, uploaded: 2, problems: 0 });
    const puts = ngx.requests().filter((r) => r.method === 'PUT');
    expect(puts.length).toBeGreaterThanOrEqual(6);
    expect(puts.every((r) => r.user === 'ci' && r.status === 201)).toBe(true);
    for (const text of [
      first.stdout,
      first.stderr,
      readFileSync(path.join(a.root, '.refinery/runs', events(first.stdout)[0]?.runId as string, 'events.jsonl'), 'utf8'),
    ]) {
      expect(text).not.toContain(writer.password);
    }

    // Read-only, with a change so that a stage misses and runs here: it is not stored.
    const b = track(demoProject());
    b.write('src/a.txt', 'changed\n');
    const before = ngx.requests().length;
    const readOnly = await run(b, { REFINERY_REMOTE_CACHE: withCredentials }, '--remote-cache-read-only');
    expect(readOnly.code, readOnly.stderr).toBe(0);
    expect(stageStarts(readOnly)).toEqual(['a', 'b']);
    const seen = ngx.requests().slice(before);
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.filter((r) => r.method !== 'GET' && r.method !== 'HEAD')).toEqual([]);
    expect(runEnd(readOnly).remote).toMatchObject({ readOnly: true, uploaded: 0 });

    // Anonymous and not read-only: the server refuses the write; one warning, the run passes.
    const c = track(demoProject());
    c.write('src/a.txt', 'changed again\n');
    const anonymous = await run(c, { REFINERY_REMOTE_CACHE: ngx.url });
    expect(anonymous.code, anonymous.stderr).toBe(0);
    expect(warnings(anonymous)).toEqual([
      expect.stringContaining(
        'the server does not let this client write (HTTP 401); set remote_cache.read_only (or --remote-cache-read-only) where only reading is allowed; nothing more is uploaded in this run',
      ),
    ]);
    expect(readFileSync(c.path('out/a.txt'), 'utf8')).toBe('changed again\nhello\n');
  });

  it('headers from the environment - sent with every request, and their values never reach the console or the event log', async () => {
    const token = 'hdr-7c1e9b3f5a2d4e6f8091';
    const p = track(
      tempProject({
        'refinery.config.yaml': `remote_cache:\n  url: ${ngx.url}/headers\n  headers_from_env: { X-Cache-Token: CACHE_HDR_VALUE }\n`,
        // A stage that prints the variable: its log line must come out redacted.
        'pipelines/demo.yaml':
          'pipeline: demo\nstages:\n  a: { run: "echo token is $CACHE_HDR_VALUE; cat src/a.txt > ${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }\n',
        'src/a.txt': 'alpha\n',
      }),
    );
    const before = ngx.requests().length;
    const result = await runCli(['run', 'demo', '--json', '-v'], { cwd: p.root, env: { CACHE_HDR_VALUE: token } });
    expect(result.code, result.stderr).toBe(0);
    const sent = ngx.requests().slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(3);
    expect(sent.every((r) => r.token === token)).toBe(true);
    expect(events(result.stdout).some((e) => e.type === 'stage-log' && String(e.message).startsWith('token is [redacted'))).toBe(true);
    const log = readFileSync(path.join(p.root, '.refinery/runs', events(result.stdout)[0]?.runId as string, 'events.jsonl'), 'utf8');
    for (const text of [result.stdout, result.stderr, log]) expect(text).not.toContain(token);
  });
});
