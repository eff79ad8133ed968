import { JOB_STATUSES, type JobExtras, type JobRecord } from './types.ts';
import { isValidJobId } from './job-id.ts';

/** A record file that cannot be used, with the file named and what is wrong in it. */
export class RecordError extends Error {}

/** Parses a record written by refinery or by the seed's Python registry; unknown keys are kept. */
export function parseRecord(text: string, file: string): JobRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecordError(`${file}: not valid JSON (${(error as Error).message}); restore it or remove the job`);
  }
  const problems = recordProblems(value);
  if (problems.length > 0) throw new RecordError(`${file}: ${problems.join('; ')}`);
  return value as JobRecord;
}

export function recordProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['is not a JSON object'];
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  const need = (key: string, ok: boolean, what: string): void => {
    if (!ok) problems.push(`/${key} ${key in record ? 'must be' : 'is missing; expected'} ${what}`);
  };
  need('schema_version', record.schema_version === 1, '1');
  need('job_id', typeof record.job_id === 'string' && isValidJobId(record.job_id), 'a job id');
  need('status', (JOB_STATUSES as readonly unknown[]).includes(record.status), JOB_STATUSES.join('|'));
  need(
    'topic_prefix',
    typeof record.topic_prefix === 'string' && record.topic_prefix.length > 0 && !/[+#]/.test(record.topic_prefix),
    'a topic without + or #',
  );
  need('last_seq', Number.isInteger(record.last_seq) && (record.last_seq as number) >= 0, 'an integer >= 0');
  need('timeout_sec', typeof record.timeout_sec === 'number' && record.timeout_sec > 0, 'a number > 0');
  need('idle_timeout_sec', typeof record.idle_timeout_sec === 'number' && record.idle_timeout_sec > 0, 'a number > 0');
  need('auth_token', record.auth_token === null || typeof record.auth_token === 'string', 'a string or null');
  const broker = record.broker as Record<string, unknown> | undefined;
  need(
    'broker',
    typeof broker === 'object' && broker !== null && typeof broker.host === 'string' && Number.isInteger(broker.port),
    'an object with host and port',
  );
  return problems;
}

/** Defaults for a record's extras when refinery did not register it (a Python-registered job). */
export function defaultExtras(id: string): JobExtras {
  return {
    job_id: id,
    job_type: 'direct',
    agent_kind: 'human',
    reviewer: null,
    reviewer_session: null,
    max_iterations: 1,
    iteration: 1,
    broker_url: null,
    feedback: null,
  };
}

/** The record without secrets, for printing, audit logs and stage artifacts. */
export function redactRecord(record: JobRecord): JobRecord {
  return {
    ...record,
    auth_token: record.auth_token === null ? null : '[redacted]',
    broker: { ...record.broker, password: record.broker.password === null ? null : '[redacted]' },
  };
}

export function isTerminalStatus(status: string): boolean {
  return status === 'completed' || status === 'error' || status === 'cancelled';
}
