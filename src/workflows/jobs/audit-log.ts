import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeJsonAtomic } from '../../engine/state/atomic-file.ts';
import { subdirNames } from '../../engine/paths/subdirs.ts';
import { jobLogDir, type RegistryPaths } from './paths.ts';
import { redactRecord } from './record-codec.ts';
import { isoSeconds } from './registry.ts';
import type { AuditLine, AuditStatus, JobExtras, JobRecord } from './types.ts';

/** The prompt and the agent's reports are no one else's business: audit files are owner-only, as the record. */
const AUDIT_FILE_MODE = 0o600;

/** `.mam/delegate_job_logs/<id>/{meta.json,events.ndjson,status.json}`; never holds a token or password. */
export class AuditLog {
  constructor(readonly paths: RegistryPaths) {}

  dir(id: string): string {
    return jobLogDir(this.paths, id);
  }

  async writeMeta(record: JobRecord, extras: JobExtras): Promise<void> {
    await mkdir(this.dir(record.job_id), { recursive: true });
    const meta = { ...redactRecord(record), refinery: { ...extras } };
    await writeJsonAtomic(path.join(this.dir(record.job_id), 'meta.json'), meta, AUDIT_FILE_MODE);
  }

  /** Appends one line with a single O_APPEND write, so concurrent writers never interleave. */
  async append(line: AuditLine): Promise<void> {
    await mkdir(this.dir(line.job_id), { recursive: true });
    await appendFile(path.join(this.dir(line.job_id), 'events.ndjson'), `${JSON.stringify(stripSecrets(line))}\n`, {
      flag: 'a',
      mode: AUDIT_FILE_MODE,
    });
  }

  async local(id: string, event: string, detail: string, data?: Record<string, unknown>, now = new Date()): Promise<void> {
    await this.append({ job_id: id, event, timestamp: isoSeconds(now), source: 'refinery', detail, ...(data ? { data } : {}) });
  }

  async writeStatus(status: AuditStatus): Promise<void> {
    await mkdir(this.dir(status.job_id), { recursive: true });
    await writeJsonAtomic(path.join(this.dir(status.job_id), 'status.json'), status, AUDIT_FILE_MODE);
  }

  async readStatus(id: string): Promise<AuditStatus | undefined> {
    try {
      return JSON.parse(await readFile(path.join(this.dir(id), 'status.json'), 'utf8')) as AuditStatus;
    } catch {
      return undefined;
    }
  }

  /** Every line of events.ndjson in file order; lines that do not parse are returned as problems. */
  async timeline(id: string): Promise<{ lines: AuditLine[]; problems: string[] }> {
    const file = path.join(this.dir(id), 'events.ndjson');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], problems: [`no audit log at ${file}`] };
      throw error;
    }
    const lines: AuditLine[] = [];
    const problems: string[] = [];
    text.split('\n').forEach((raw, index) => {
      if (raw.trim() === '') return;
      try {
        lines.push(JSON.parse(raw) as AuditLine);
      } catch {
        problems.push(`${file}:${index + 1}: not valid JSON, skipped`);
      }
    });
    return { lines, problems };
  }

  /** Ids that have an audit log directory, sorted. */
  jobIds(): Promise<string[]> {
    return subdirNames(this.paths.logsRoot);
  }
}

/** Drops `auth_token` (and anything named like a secret) from an event's data before it is stored. */
export function stripSecrets<T extends { data?: Record<string, unknown> }>(line: T): T {
  if (!line.data) return line;
  const data = Object.fromEntries(Object.entries(line.data).filter(([key]) => !/token|password|secret|hmac/i.test(key)));
  const { data: _dropped, ...rest } = line;
  return (Object.keys(data).length > 0 ? { ...rest, data } : rest) as T;
}
