// `refinery ui` as a server, over real HTTP: the token, the cookie, the Host allow-list, Origin
// checks on mutations and on the event stream, the headers, paths that lead outside the project,
// loopback binding, and `refinery ui list`.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProject, runCli, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

let project: TempProject;
let outside: string;
let ui: UiProcess;

beforeAll(async () => {
  project = demoProject();
  const run = await runCli(['run', 'demo'], { cwd: project.root });
  expect(run.code, run.stderr).toBe(0);
  outside = mkdtempSync(path.join(os.tmpdir(), 'refinery-outside-'));
  writeFileSync(path.join(outside, 'secret.txt'), 'outside the project\n');
  symlinkSync(path.join(outside, 'secret.txt'), project.path('src/link-out.txt'));
  symlinkSync(outside, project.path('src/dir-out'));
  project.write('.mam/jobs/job-1.json', '{"auth_token":"do-not-serve"}');
  project.write('.git/config', '[core]\n');
  ui = new UiProcess(['ui'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

/** Where a TCP port listens, from /proc/net/tcp (what `ss -ltn` reads): the local addresses. */
function listeningAddresses(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [addr, p] = (cols[1] ?? '').split(':');
      if (p === hexPort && cols[3] === '0A') out.push(addr as string);
    }
  }
  return out;
}

describe('refinery ui server', () => {
  it('ui - binds 127.0.0.1 only, on a free port, and prints the URL with its token', () => {
    expect(ui.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    if (listeningAddresses(ui.port).length > 0) expect(listeningAddresses(ui.port)).toEqual(['0100007F']);
  });

  it('ui - requests without the token, or with a wrong one, get 401', async () => {
    for (const p of [
      '/',
      '/api/overview',
      '/api/pipelines',
      '/api/events',
      '/assets/app.js',
      '/vendor/marked.umd.js',
      '/files/src/a.txt',
    ]) {
      expect((await ui.request(p)).status, p).toBe(401);
      expect((await ui.request(`${p}${p.includes('?') ? '&' : '?'}token=${'x'.repeat(43)}`)).status, p).toBe(401);
      expect((await ui.request(p, { headers: { Cookie: `refinery-ui-${ui.port}=wrong` } })).status, p).toBe(401);
    }
    // A cookie of another dashboard (another port) is not this one's.
    expect((await ui.request('/api/overview', { headers: { Cookie: `refinery-ui-1=${ui.token}` } })).status).toBe(401);
  });

  it('ui - the token in the URL becomes an HttpOnly SameSite=Strict cookie and leaves the address', async () => {
    const first = await ui.request(`/?token=${ui.token}`);
    expect(first.status).toBe(302);
    expect(first.headers.location).toBe('/');
    const cookie = String(first.headers['set-cookie']);
    expect(cookie).toContain(`refinery-ui-${ui.port}=${ui.token}`);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const page = await ui.request('/', { auth: true });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<main id="view">');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
    const api = await ui.request('/api/overview', { auth: true });
    expect(api.status).toBe(200);
    expect(JSON.parse(api.body)).toMatchObject({ mode: 'standalone', actions: false, pipelines: ['demo'] });
    expect(api.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('ui - a Host header other than the dashboard own gets 403 (DNS rebinding)', async () => {
    expect((await ui.request('/api/overview', { auth: true, headers: { Host: 'evil.test' } })).status).toBe(403);
    expect((await ui.request('/api/overview', { auth: true, headers: { Host: `evil.test:${ui.port}` } })).status).toBe(403);
    expect((await ui.request('/api/overview', { auth: true, headers: { Host: '127.0.0.1:1' } })).status).toBe(403);
    expect((await ui.request('/api/overview', { auth: true, headers: { Host: `localhost:${ui.port}` } })).status).toBe(200);
  });

  it('ui - mutations need the dashboard own Origin, and a read-only dashboard refuses them', async () => {
    const body = JSON.stringify({ pipeline: 'demo' });
    const json = { 'Content-Type': 'application/json' };
    const own = `http://127.0.0.1:${ui.port}`;
    expect((await ui.request('/api/actions/run', { method: 'POST', auth: true, body, headers: { ...json } })).status).toBe(403);
    expect(
      (await ui.request('/api/actions/run', { method: 'POST', auth: true, body, headers: { ...json, Origin: 'http://evil.test' } })).status,
    ).toBe(403);
    expect(
      (
        await ui.request('/api/actions/run', {
          method: 'POST',
          auth: true,
          body,
          headers: { ...json, Origin: own, 'Sec-Fetch-Site': 'cross-site' },
        })
      ).status,
    ).toBe(403);
    expect((await ui.request('/api/actions/run', { method: 'POST', body, headers: { ...json, Origin: own } })).status).toBe(401);
    const readOnly = await ui.request('/api/actions/run', {
      method: 'POST',
      auth: true,
      body,
      headers: { ...json, Origin: own, 'Sec-Fetch-Site': 'same-origin' },
    });
    expect(readOnly.status).toBe(403);
    expect(readOnly.body).toContain('--allow-actions');
  });

  it('ui - the event stream refuses other websites and starts with the current sequence number', async () => {
    expect((await ui.request('/api/events', { auth: true, headers: { Origin: 'http://evil.test' } })).status).toBe(403);
    expect((await ui.request('/api/events', { auth: true, headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
    const stream = await ui.request('/api/events', { auth: true });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toContain('text/event-stream');
  });

  it('ui - paths that lead outside the project, or to its secrets, return 404', async () => {
    const ok = await ui.request('/files/src/a.txt', { auth: true });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe('alpha\n');
    expect(ok.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(ok.headers['content-security-policy']).toContain('sandbox');
    for (const p of [
      '/files/../../../../etc/passwd',
      '/files/src/../../../../etc/passwd',
      '/files/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/files/src/%2E%2E/%2E%2E/%2E%2E/etc/passwd',
      '/files/src%2f..%2f..%2f..%2fetc%2fpasswd',
      '/files/..%2f..%2f..%2fetc%2fpasswd',
      '/files/%252e%252e/etc/passwd',
      `/files/${encodeURIComponent(path.join(outside, 'secret.txt'))}`,
      '/files//etc/passwd',
      '/files/src/link-out.txt',
      '/files/src/dir-out/secret.txt',
      '/files/.mam/jobs/job-1.json',
      '/files/.git/config',
      `/files/.refinery/ui/${ui.child.pid}.json`,
      '/files/src',
      '/files/src/a.txt%00.png',
    ]) {
      const answer = await ui.request(p, { auth: true });
      expect(answer.status, p).toBe(404);
      expect(answer.body, p).not.toContain('outside the project');
      expect(answer.body, p).not.toContain('root:');
    }
    for (const dir of ['..', '../..', 'src/dir-out', '/etc', `${outside}`]) {
      expect((await ui.request(`/api/massgen/turn?dir=${encodeURIComponent(dir)}`, { auth: true })).status, dir).toBe(404);
    }
  });

  it('ui - refinery ui list prints the running dashboard URL; --host beyond loopback needs --token', async () => {
    const listed = await runCli(['ui', 'list'], { cwd: project.root });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(ui.url);
    const refused = await runCli(['ui', '--host', '0.0.0.0'], { cwd: project.root });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--token');
    const badToken = await runCli(['ui', '--host', '0.0.0.0', '--token', 'short'], { cwd: project.root });
    expect(badToken.code).toBe(2);
    const outsideLogs = await runCli(['ui', '--logs-dir', outside], { cwd: project.root });
    expect(outsideLogs.code).toBe(2);
    expect(outsideLogs.stderr).toContain('outside the project');
  });
});

describe('refinery ui with --allow-actions', () => {
  it('ui - an action from the dashboard own page runs the pipeline as refinery run does', async () => {
    const p = demoProject();
    const withActions = new UiProcess(['ui', '--allow-actions'], p.root);
    try {
      await withActions.ready;
      const ended = withActions.nextEvent((m) => m.kind === 'run-event' && m.event.type === 'run-end');
      const answer = await withActions.request('/api/actions/run', {
        method: 'POST',
        auth: true,
        body: JSON.stringify({ pipeline: 'demo' }),
        headers: { 'Content-Type': 'application/json', Origin: withActions.base, 'Sec-Fetch-Site': 'same-origin' },
      });
      expect(answer.status, answer.body).toBe(200);
      expect((await ended).event.status).toBe('succeeded');
      const runs = JSON.parse((await withActions.request('/api/runs', { auth: true })).body) as {
        rows: Array<{ status: string; pipeline: string }>;
      };
      expect(runs.rows[0]).toMatchObject({ pipeline: 'demo', status: 'succeeded' });
      expect(readFileSync(p.path('out/b.json'), 'utf8')).toContain('alpha');
    } finally {
      await withActions.stop();
      p.cleanup();
    }
  });
});
