import { mkdir, readFile, readdir } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { writeJsonAtomic } from '../../engine/state/atomic-file.ts';
import { withFileLock } from './file-lock.ts';
import { assertJobId, isValidJobId, newJobId } from './job-id.ts';
import { defaultTopicPrefix, extrasDir, extrasFile, lockFile, recordFile, type RegistryPaths } from './paths.ts';
import { defaultExtras, isTerminalStatus, parseRecord, RecordError } from './record-codec.ts';
import type { JobEventName, JobExtras, JobRecord, JobStatus, RecordBroker } from './types.ts';

export interface RegisterInput {
  prompt: string;
  agent: string;
  agentSession: string;
  broker: RecordBroker;
  timeoutSec: number;
  idleTimeoutSec: number;
  expectedArtifacts?: string[];
  /** Register without a token, so the seed's Python publisher (which sends none) is accepted. */
  compat?: boolean;
  /** Use this id instead of a fresh one (fails if it exists). */
  jobId?: string;
  topicPrefix?: string;
  extras?: Partial<Omit<JobExtras, 'job_id'>>;
}

export class JobNotFoundError extends Error {}

const RECORD_MODE = 0o600;

/** `.mam/jobs/<id>.json` records; every read-modify-write runs under `flock(<registry>/.lock)`. */
export class JobRegistry {
  constructor(
    readonly paths: RegistryPaths,
    private readonly options: { lockTimeoutSec?: number } = {},
  ) {}

  async register(input: RegisterInput, now = new Date()): Promise<{ record: JobRecord; extras: JobExtras }> {
    if (input.jobId !== undefined) assertJobId(input.jobId, '--job');
    await mkdir(extrasDir(this.paths), { recursive: true });
    return this.locked(async () => {
      const id = input.jobId ?? (await this.freshId());
      if (input.jobId !== undefined && (await this.exists(id))) {
        throw new RecordError(`job '${id}' already exists in ${this.paths.registryDir}; pick another id or omit --job`);
      }
      const stamp = isoSeconds(now);
      const record: JobRecord = {
        schema_version: 1,
        job_id: id,
        status: 'pending',
        created_at: stamp,
        updated_at: stamp,
        prompt: input.prompt,
        agent: input.agent,
        agent_session: input.agentSession,
        broker: input.broker,
        topic_prefix: input.topicPrefix ?? defaultTopicPrefix(id),
        timeout_sec: input.timeoutSec,
        idle_timeout_sec: input.idleTimeoutSec,
        expected_artifacts: [...(input.expectedArtifacts ?? [])],
        last_seq: 0,
        auth_token: input.compat ? null : randomBytes(32).toString('base64url'),
      };
      const extras: JobExtras = { ...defaultExtras(id), agent_kind: 'command', ...input.extras, job_id: id };
      await writeJsonAtomic(extrasFile(this.paths, id), extras, RECORD_MODE);
      await writeJsonAtomic(recordFile(this.paths, id), record, RECORD_MODE);
      return { record, extras };
    });
  }

  async get(id: string): Promise<JobRecord> {
    const file = recordFile(this.paths, id);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new JobNotFoundError(`no job '${id}' in ${this.paths.registryDir} (see 'refinery jobs list')`);
      }
      throw error;
    }
    return parseRecord(text, file);
  }

  /** refinery's side settings, or the defaults for a job the Python side registered. */
  async getExtras(id: string): Promise<JobExtras> {
    try {
      const value = JSON.parse(await readFile(extrasFile(this.paths, id), 'utf8')) as Partial<JobExtras>;
      return { ...defaultExtras(id), ...value, job_id: id };
    } catch {
      return defaultExtras(id);
    }
  }

  /** All readable records, oldest first; files that are not records are reported, not thrown. */
  async list(): Promise<{ records: JobRecord[]; problems: string[] }> {
    let names: string[];
    try {
      names = await readdir(this.paths.registryDir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], problems: [] };
      throw error;
    }
    const records: JobRecord[] = [];
    const problems: string[] = [];
    for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
      const id = name.slice(0, -'.json'.length);
      if (!isValidJobId(id)) continue;
      try {
        records.push(await this.get(id));
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    records.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.job_id.localeCompare(b.job_id));
    return { records, problems };
  }

  /** Locked read-modify-write of one record (and its extras); `mutate` returns the new values. */
  async update(
    id: string,
    mutate: (record: JobRecord, extras: JobExtras) => { record?: JobRecord; extras?: JobExtras },
    now = new Date(),
  ): Promise<{ record: JobRecord; extras: JobExtras }> {
    assertJobId(id);
    return this.locked(async () => {
      const record = await this.get(id);
      const extras = await this.getExtras(id);
      const next = mutate(record, extras);
      const nextExtras = next.extras ?? extras;
      if (next.extras) await writeJsonAtomic(extrasFile(this.paths, id), nextExtras, RECORD_MODE);
      let nextRecord = record;
      if (next.record) {
        nextRecord = { ...next.record, updated_at: isoSeconds(now) };
        await writeJsonAtomic(recordFile(this.paths, id), nextRecord, RECORD_MODE);
      }
      return { record: nextRecord, extras: nextExtras };
    });
  }

  /** Takes `last_seq + 1` for an event and moves the status as the event implies, in one locked write. */
  async reserveSeq(id: string, event: JobEventName): Promise<{ seq: number; record: JobRecord }> {
    const { record } = await this.update(id, (current) => ({
      record: { ...current, last_seq: current.last_seq + 1, status: statusAfter(current.status, event) },
    }));
    return { seq: record.last_seq, record };
  }

  async setStatus(id: string, status: JobStatus, options: { onlyIfNotTerminal?: boolean } = {}): Promise<JobRecord> {
    const { record } = await this.update(id, (current) =>
      options.onlyIfNotTerminal && isTerminalStatus(current.status) ? {} : { record: { ...current, status } },
    );
    return record;
  }

  private locked<T>(fn: () => Promise<T>): Promise<T> {
    return withFileLock(
      lockFile(this.paths),
      fn,
      this.options.lockTimeoutSec !== undefined ? { timeoutSec: this.options.lockTimeoutSec } : {},
    );
  }

  private async exists(id: string): Promise<boolean> {
    try {
      await readFile(recordFile(this.paths, id));
      return true;
    } catch {
      return false;
    }
  }

  private async freshId(): Promise<string> {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const id = newJobId();
      if (!(await this.exists(id))) return id;
    }
    throw new RecordError(`could not find a free job id in ${this.paths.registryDir}`);
  }
}

/** pending -> running on any non-terminal event; a terminal event ends a job that has not ended. */
export function statusAfter(current: JobStatus, event: JobEventName): JobStatus {
  if (isTerminalStatus(current)) return current;
  if (event === 'completed' || event === 'error') return event;
  return 'running';
}

/** ISO-8601 UTC with `Z`, second precision, as the seed's examples. */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
