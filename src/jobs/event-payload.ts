import { timingSafeEqual } from 'node:crypto';
import { JOB_EVENTS, type JobEventName, type JobEventPayload } from './types.ts';

export type DecodeResult =
  | { ok: true; payload: JobEventPayload }
  | { ok: false; reason: 'undecodable' | 'schema_version' | 'malformed' | 'foreign_job' | 'bad_token'; message: string; seq?: number; event?: string };

export const TOKEN_FIELD = 'auth_token';

/** The payload refinery's publisher sends: exactly the seed's fields, extras only inside `data`. */
export function buildPayload(input: {
  seq: number;
  jobId: string;
  event: JobEventName;
  timestamp: string;
  detail: string;
  data?: Record<string, unknown>;
  token: string | null;
}): JobEventPayload {
  const data = { ...(input.data ?? {}), ...(input.token !== null ? { [TOKEN_FIELD]: input.token } : {}) };
  return {
    schema_version: 1,
    seq: input.seq,
    job_id: input.jobId,
    event: input.event,
    timestamp: input.timestamp,
    detail: input.detail,
    ...(Object.keys(data).length > 0 ? { data } : {}),
  };
}

/**
 * Checks a received payload as the seed's subscriber does (decode, schema_version, job_id), then
 * the job token unless the job is a compat job (expectedToken null).
 */
export function decodePayload(raw: Buffer | string, jobId: string, expectedToken: string | null): DecodeResult {
  let value: unknown;
  try {
    value = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    return { ok: false, reason: 'undecodable', message: `payload is not JSON (${raw.length} bytes)` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'undecodable', message: 'payload is not a JSON object' };
  }
  const p = value as Record<string, unknown>;
  const seq = Number.isInteger(p.seq) ? (p.seq as number) : undefined;
  const event = typeof p.event === 'string' ? p.event : undefined;
  const where = { ...(seq !== undefined ? { seq } : {}), ...(event !== undefined ? { event } : {}) };
  if (p.schema_version !== 1) {
    return { ok: false, reason: 'schema_version', message: `schema_version ${JSON.stringify(p.schema_version)} is not 1`, ...where };
  }
  if (p.job_id !== jobId) {
    return { ok: false, reason: 'foreign_job', message: `job_id ${JSON.stringify(p.job_id)} is not the watched job`, ...where };
  }
  const problems: string[] = [];
  if (seq === undefined || seq < 1) problems.push('seq must be an integer >= 1');
  if (!(JOB_EVENTS as readonly unknown[]).includes(p.event)) problems.push(`event must be one of ${JOB_EVENTS.join('|')}`);
  if (p.detail !== undefined && p.detail !== null && typeof p.detail !== 'string') problems.push('detail must be a string');
  if (p.timestamp !== undefined && typeof p.timestamp !== 'string') problems.push('timestamp must be a string');
  const data = p.data;
  if (data !== undefined && data !== null && (typeof data !== 'object' || Array.isArray(data))) problems.push('data must be an object');
  if (problems.length > 0) return { ok: false, reason: 'malformed', message: problems.join('; '), ...where };
  const dataObject = (data ?? undefined) as Record<string, unknown> | undefined;
  if (expectedToken !== null && !tokenMatches(dataObject?.[TOKEN_FIELD], expectedToken)) {
    return { ok: false, reason: 'bad_token', message: `data.${TOKEN_FIELD} is missing or wrong`, ...where };
  }
  return {
    ok: true,
    payload: {
      schema_version: 1,
      seq: seq as number,
      job_id: jobId,
      event: p.event as JobEventName,
      timestamp: typeof p.timestamp === 'string' ? p.timestamp : '',
      detail: typeof p.detail === 'string' ? p.detail : '',
      ...(dataObject ? { data: dataObject } : {}),
    },
  };
}

function tokenMatches(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The seed subscriber's stdout line: `{timestamp} job={job_id} seq={seq} {event:<20} {detail}`. */
export function formatEventLine(payload: Pick<JobEventPayload, 'timestamp' | 'job_id' | 'seq' | 'event' | 'detail'>): string {
  return `${payload.timestamp || '-'} job=${payload.job_id || '?'} seq=${payload.seq ?? '?'} ${String(payload.event || '?').padEnd(20)} ${payload.detail || '-'}`;
}
