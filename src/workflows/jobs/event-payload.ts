import { SIGNATURE_FIELD, signatureMatches, signEvent, unsignedData } from './event-auth.ts';
import { canonicalProblem } from '../../security/jcs.ts';
import { JOB_EVENTS, type JobEventName, type JobEventPayload } from './types.ts';

export type DecodeResult =
  | { ok: true; payload: JobEventPayload }
  | {
      ok: false;
      reason: 'oversize' | 'undecodable' | 'schema_version' | 'malformed' | 'foreign_job' | 'unverifiable' | 'bad_token';
      message: string;
      seq?: number;
      event?: string;
    };

/**
 * Bounds on what one event may carry, so no publisher (whatever it holds) can flood the subscriber's
 * stdout and the audit log: a detail is a summary, and a reviewer's verdict fits well within it.
 */
export const MAX_DETAIL_CHARS = 32 * 1024;
export const MAX_PAYLOAD_BYTES = 128 * 1024;

/**
 * The payload refinery's publisher sends: exactly the seed's fields, extras only inside `data`; a job
 * with a token gets `data.hmac_sig` (the token itself never leaves the record).
 */
export function buildPayload(input: {
  seq: number;
  jobId: string;
  event: JobEventName;
  timestamp: string;
  detail: string;
  data?: Record<string, unknown>;
  token: string | null;
}): JobEventPayload {
  const extras = unsignedData(input.data);
  const signature =
    input.token === null
      ? {}
      : {
          [SIGNATURE_FIELD]: signEvent(
            { job_id: input.jobId, seq: input.seq, event: input.event, timestamp: input.timestamp, detail: input.detail, data: extras },
            input.token,
          ),
        };
  const data = { ...extras, ...signature };
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
 * Checks a received payload as the seed's subscriber does (decode, schema_version, job_id), then its
 * size, then its signature by the job token unless the job is a compat job (expectedToken null).
 */
export function decodePayload(raw: Buffer | string, jobId: string, expectedToken: string | null): DecodeResult {
  const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : raw.length;
  if (bytes > MAX_PAYLOAD_BYTES) {
    return { ok: false, reason: 'oversize', message: `payload is ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES}` };
  }
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
  const detail = typeof p.detail === 'string' ? p.detail : '';
  if (detail.length > MAX_DETAIL_CHARS) {
    return { ok: false, reason: 'oversize', message: `detail is ${detail.length} characters; the limit is ${MAX_DETAIL_CHARS}`, ...where };
  }
  const dataObject = (data ?? undefined) as Record<string, unknown> | undefined;
  const payload: JobEventPayload = {
    schema_version: 1,
    seq: seq as number,
    job_id: jobId,
    event: p.event as JobEventName,
    timestamp: typeof p.timestamp === 'string' ? p.timestamp : '',
    detail,
    ...(dataObject ? { data: dataObject } : {}),
  };
  if (expectedToken !== null) {
    const fields = {
      job_id: jobId,
      seq: payload.seq,
      event: payload.event,
      timestamp: payload.timestamp,
      detail,
      data: unsignedData(dataObject),
    };
    // Checked before the signature: a mismatch would say "not signed with this job's token" when
    // the publisher signed in good faith a value JSON cannot carry exactly.
    const problem = canonicalProblem(fields, '');
    if (problem) return { ok: false, reason: 'unverifiable', message: problem, ...where };
    if (!signatureMatches(fields, dataObject?.[SIGNATURE_FIELD], expectedToken)) {
      return {
        ok: false,
        reason: 'bad_token',
        message: `data.${SIGNATURE_FIELD} is missing or not signed with this job's token`,
        ...where,
      };
    }
  }
  return { ok: true, payload };
}

/** The seed subscriber's stdout line: `{timestamp} job={job_id} seq={seq} {event:<20} {detail}`. */
export function formatEventLine(payload: Pick<JobEventPayload, 'timestamp' | 'job_id' | 'seq' | 'event' | 'detail'>): string {
  return `${payload.timestamp || '-'} job=${payload.job_id || '?'} seq=${payload.seq ?? '?'} ${String(payload.event || '?').padEnd(20)} ${payload.detail || '-'}`;
}
