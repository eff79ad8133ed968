// Issue #32, item 4: the dashboard's /files/ never serves refinery's own state (a refine worker's
// job record with its auth_token, audit logs, run journals); what it does serve (project files,
// session artifacts, rejected artifacts) goes through the same redaction as /api/, a secret never
// cut in two by a range. Through the real `refinery ui` server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import { AuditLog } from '../../../src/workflows/jobs/audit-log.ts';
import { tempProject, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

const SK = 'sk-proj-Fz8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9G';
const PEM_BODY = 'MC4CAQAwBQYDK2VwBCIEIHq8x3Lr1Vd9nT0cW5eK2yP7mJ4sA6fB1uG8hN3oZ2Qi';
const WORKER = '.refinery/sessions/s1/worker/jobs';

let project: TempProject;
let ui: UiProcess;
let jobId: string;
let token: string;

beforeAll(async () => {
  project = tempProject({
    'notes/deploy.log': `deploying\nkey ${SK}\n-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----\ndone\n`,
    '.refinery/sessions/s1/round_001/judges/a/verdict.json': JSON.stringify({
      verdict: 'pass',
      note: `tried ${SK}`,
      api_key: 'Zq7Lm2Np4Rs6Tv8X',
    }),
    '.refinery/rejected/20260101T000000000Z-abc123/stage/errors.json': JSON.stringify([{ message: `bad value ${SK}` }]),
    '.refinery/runs/20260101T000000000Z-abc123/events.jsonl': '{"type":"run-start"}\n',
    '.refinery/state/p.jsonl': '{}\n',
  });
  const paths = registryPaths(project.root, WORKER);
  const { record, extras } = await new JobRegistry(paths).register({
    prompt: 'Refine the deliverable',
    agent: 'claude',
    agentSession: 's1',
    broker: { host: '127.0.0.1', port: 1883, tls: false, username: null, password: null },
    timeoutSec: 600,
    idleTimeoutSec: 60,
  });
  jobId = record.job_id;
  token = record.auth_token as string;
  await new AuditLog(paths).writeMeta(record, extras);
  ui = new UiProcess(['ui'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
});

describe('refinery ui /files/', () => {
  it("files - a refine worker's job record, its audit log and refinery's run state are not served; /api/jobs still shows the job", async () => {
    for (const file of [
      `${WORKER}/${jobId}.json`,
      `${WORKER}/.refinery/${jobId}.json`,
      '.refinery/sessions/s1/worker/delegate_job_logs',
      '.refinery/runs/20260101T000000000Z-abc123/events.jsonl',
      '.refinery/state/p.jsonl',
    ]) {
      const got = await ui.request(`/files/${file}`, { auth: true });
      expect(got.status, file).toBe(404);
      expect(got.body).not.toContain(token);
    }
    const list = await ui.request('/api/jobs', { auth: true });
    expect(list.body).toContain(jobId);
    expect(list.body).not.toContain(token);
  });

  it('files - project files, session artifacts and rejected artifacts are served redacted', async () => {
    const log = await ui.request('/files/notes/deploy.log', { auth: true });
    expect(log.status).toBe(200);
    expect(log.body).toBe('deploying\nkey [redacted:sk_key]\n[redacted:private_key]\ndone\n');
    const verdict = await ui.request('/files/.refinery/sessions/s1/round_001/judges/a/verdict.json', { auth: true });
    expect(verdict.status).toBe(200);
    expect(JSON.parse(verdict.body)).toEqual({
      verdict: 'pass',
      note: 'tried [redacted:sk_key]',
      api_key: '[redacted:secret_assignment]',
    });
    const errors = await ui.request('/files/.refinery/rejected/20260101T000000000Z-abc123/stage/errors.json', { auth: true });
    expect(errors.status).toBe(200);
    expect(errors.body).not.toContain(SK);
  });

  it('files - a range ends at a line break, so a key is never cut in two; the next range starts where X-Range ends', async () => {
    let offset = 0;
    let text = '';
    for (let i = 0; i < 10 && offset < 1000; i++) {
      const piece = await ui.request(`/files/notes/deploy.log?offset=${offset}&length=16`, { auth: true });
      expect(piece.status).toBe(200);
      expect(piece.body).not.toMatch(/Fz8Yx7|Vv0c0t|cW5eK2/);
      text += piece.body;
      const [, end] = String(piece.headers['x-range']).split('-').map(Number);
      if (end === undefined || end >= Number(piece.headers['x-total-bytes'])) break;
      offset = end;
    }
    expect(text).toBe('deploying\nkey [redacted:sk_key]\n[redacted:private_key]\ndone\n');
  });
});
