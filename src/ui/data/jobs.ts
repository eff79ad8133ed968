// Delegated jobs: the `.mam/jobs` registry (and each refine session's worker registry), records
// with their token and broker password redacted, and a job's audit timeline. A file watcher tells
// the pages when a record or a timeline changed.
import { existsSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { JobRegistry } from '../../workflows/jobs/registry.ts';
import { AuditLog } from '../../workflows/jobs/audit-log.ts';
import { registryPaths, type RegistryPaths } from '../../workflows/jobs/paths.ts';
import { isValidJobId } from '../../workflows/jobs/job-id.ts';
import { redactRecord } from '../../workflows/jobs/record-codec.ts';
import { DEFAULT_SESSIONS_DIR } from '../../workflows/refine/session-layout.ts';
import { relativeInProject } from '../safe-path.ts';

const TIMELINE_TAIL = 1000;

export class JobStore {
  constructor(private readonly root: string) {}

  /** `.mam/jobs`, then each refine session's `worker/jobs`. */
  registries(): Array<{ name: string; paths: RegistryPaths }> {
    const out = [{ name: '.mam/jobs', paths: registryPaths(this.root) }];
    const sessions = path.join(this.root, DEFAULT_SESSIONS_DIR);
    let names: string[] = [];
    try {
      names = readdirSync(sessions).sort();
    } catch {
      /* no sessions */
    }
    for (const s of names) {
      const dir = path.join(sessions, s, 'worker', 'jobs');
      if (existsSync(dir)) out.push({ name: relativeInProject(this.root, dir) ?? dir, paths: registryPaths(this.root, dir) });
    }
    return out;
  }

  async list(): Promise<{ jobs: Array<Record<string, unknown>>; problems: string[] }> {
    const jobs: Array<Record<string, unknown>> = [];
    const problems: string[] = [];
    for (const { name, paths } of this.registries()) {
      const registry = new JobRegistry(paths);
      const listed = await registry.list();
      problems.push(...listed.problems);
      for (const record of listed.records) {
        const extras = await registry.getExtras(record.job_id);
        const safe = redactRecord(record);
        const ended = record.status === 'completed' || record.status === 'error' || record.status === 'cancelled';
        const elapsedMs = (ended ? Date.parse(record.updated_at) : Date.now()) - Date.parse(record.created_at);
        jobs.push({
          registry: name,
          ...safe,
          job_type: extras.job_type,
          agent_kind: extras.agent_kind,
          elapsedMs: Number.isFinite(elapsedMs) ? elapsedMs : null,
        });
      }
    }
    jobs.sort((a, b) => String(b.created_at).localeCompare(String(a.created_at)));
    return { jobs, problems };
  }

  async job(registryName: string, id: string): Promise<Record<string, unknown> | undefined> {
    if (!isValidJobId(id)) return undefined;
    const found = this.registries().find((r) => r.name === registryName);
    if (!found) return undefined;
    const registry = new JobRegistry(found.paths);
    let record;
    try {
      record = await registry.get(id);
    } catch {
      return undefined;
    }
    const audit = new AuditLog(found.paths);
    const timeline = await audit.timeline(id).catch(() => ({ lines: [], problems: [] }));
    return {
      registry: registryName,
      record: redactRecord(record),
      extras: await registry.getExtras(id),
      status: (await audit.readStatus(id)) ?? null,
      timeline: timeline.lines.slice(-TIMELINE_TAIL),
      timelineTotal: timeline.lines.length,
      problems: timeline.problems.slice(0, 20),
    };
  }
}

/** Calls `changed` (debounced) whenever a registry or an audit log changes; returns a closer. */
export function watchJobs(store: JobStore, changed: () => void): () => void {
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  const notify = (): void => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      changed();
    }, 100);
  };
  const watched = new Set<string>();
  const attach = (): void => {
    for (const { paths } of store.registries()) {
      for (const [dir, recursive] of [
        [paths.registryDir, false],
        [paths.logsRoot, true],
      ] as const) {
        if (watched.has(dir) || !existsSync(dir)) continue;
        try {
          const w = watch(dir, { recursive }, notify);
          w.on('error', () => w.close());
          watchers.push(w);
          watched.add(dir);
        } catch {
          /* polled below */
        }
      }
    }
  };
  attach();
  // New registries (a first job, a new refine session's worker) are picked up here.
  const poll = setInterval(attach, 2000);
  poll.unref();
  return () => {
    clearInterval(poll);
    if (timer) clearTimeout(timer);
    for (const w of watchers) w.close();
  };
}
