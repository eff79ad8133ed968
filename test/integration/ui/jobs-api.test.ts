// Delegated jobs in the dashboard: the registry's records with their token redacted, a job's audit
// timeline, and a "jobs changed" message on the stream as soon as a record or a timeline changes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/workflows/jobs/audit-log.ts';
import { registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import { tempProject, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

let project: TempProject;
let ui: UiProcess;
let jobId: string;
let token: string;

beforeAll(async () => {
  project = tempProject();
  const paths = registryPaths(project.root);
  const { record, extras } = await new JobRegistry(paths).register({
    prompt: 'Fix the failing test',
    agent: 'claude',
    agentSession: 's1',
    broker: { host: '127.0.0.1', port: 1883, tls: false, username: null, password: null },
    timeoutSec: 600,
    idleTimeoutSec: 60,
  });
  jobId = record.job_id;
  token = record.auth_token as string;
  const audit = new AuditLog(paths);
  await audit.writeMeta(record, extras);
  await audit.local(jobId, 'registered', 'job registered');
  ui = new UiProcess(['ui'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
});

describe('refinery ui jobs', () => {
  it('ui - the jobs list and a job page never carry its token; a new timeline event is pushed', async () => {
    const list = await ui.request('/api/jobs', { auth: true });
    expect(list.status).toBe(200);
    expect(list.body).not.toContain(token);
    const jobs = (JSON.parse(list.body) as { jobs: Array<Record<string, unknown>> }).jobs;
    expect(jobs).toEqual([
      expect.objectContaining({
        job_id: jobId,
        status: 'pending',
        registry: '.mam/jobs',
        auth_token: '[redacted]',
        prompt: 'Fix the failing test',
      }),
    ]);

    const changed = ui.nextEvent((m) => m.kind === 'changed' && m.topic === 'jobs', { since: Number.MAX_SAFE_INTEGER });
    await new AuditLog(registryPaths(project.root)).append({
      job_id: jobId,
      event: 'progress',
      timestamp: '2026-01-01T00:00:00Z',
      source: 'mqtt',
      seq: 1,
      detail: 'halfway',
    });
    await changed;
    const page = await ui.request(`/api/jobs/job?registry=${encodeURIComponent('.mam/jobs')}&id=${jobId}`, { auth: true });
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(token);
    const job = JSON.parse(page.body) as { record: { auth_token: string }; timeline: Array<{ event: string; detail?: string }> };
    expect(job.record.auth_token).toBe('[redacted]');
    expect(job.timeline.map((t) => [t.event, t.detail])).toEqual([
      ['registered', 'job registered'],
      ['progress', 'halfway'],
    ]);
    expect((await ui.request(`/api/jobs/job?registry=${encodeURIComponent('../x')}&id=${jobId}`, { auth: true })).status).toBe(404);
    expect((await ui.request(`/api/jobs/job?registry=${encodeURIComponent('.mam/jobs')}&id=..%2F..%2Fx`, { auth: true })).status).toBe(404);
  });
});
