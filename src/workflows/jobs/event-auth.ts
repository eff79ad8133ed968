// How a job's events prove they come from someone holding the job's secret (the record's auth_token,
// readable by its owner only) without the secret ever going on the wire: an HMAC over the event.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { BrokerConfig } from '../mqtt/broker-config.ts';
import { canonicalize } from '../../security/jcs.ts';
import type { JobExtras, JobRecord } from './types.ts';

/** `data.hmac_sig`: the name the seed's spec reserves for a production signature. */
export const SIGNATURE_FIELD = 'hmac_sig';

/** The signed fields of an event, as the subscriber normalises them (missing detail/timestamp are ''). */
export interface SignedFields {
  job_id: string;
  seq: number;
  event: string;
  timestamp: string;
  detail: string;
  /** `data` without `hmac_sig`; {} when the event has none. */
  data: Record<string, unknown>;
}

/**
 * hex HMAC-SHA256, keyed by the UTF-8 secret, of the RFC 8785 canonical JSON (jcs.ts) of
 * {schema_version: 1, job_id, seq, event, timestamp, detail, data}. docs/jobs-signing.md gives the
 * same in Python (the suite runs that very snippet against this function).
 */
export function signEvent(fields: SignedFields, secret: string): string {
  const body = {
    schema_version: 1,
    job_id: fields.job_id,
    seq: fields.seq,
    event: fields.event,
    timestamp: fields.timestamp,
    detail: fields.detail,
    data: fields.data,
  };
  return createHmac('sha256', secret).update(canonicalize(body), 'utf8').digest('hex');
}

export function signatureMatches(fields: SignedFields, given: unknown, secret: string): boolean {
  if (typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(signEvent(fields, secret), 'hex'));
}

/** `data` without the signature, as it was signed. */
export function unsignedData(data: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!data) return {};
  const { [SIGNATURE_FIELD]: _signature, ...rest } = data;
  return rest;
}

/**
 * The MQTT login for a job's topics on refinery's embedded broker, which admits to them only clients
 * that present it. Derived from the secret (never the secret itself), so even the broker learns nothing
 * that signs an event.
 */
export function brokerCredential(record: Pick<JobRecord, 'job_id' | 'auth_token'>): { username: string; password: string } | undefined {
  if (record.auth_token === null) return undefined;
  const password = createHmac('sha256', record.auth_token).update(`refinery-broker-login:${record.job_id}`, 'utf8').digest('base64url');
  return { username: `refinery-job-${record.job_id}`, password };
}

/** The broker config a job's own clients use: with the job's login when its topics are guarded. */
export function withJobLogin(config: BrokerConfig, record: JobRecord, extras: Pick<JobExtras, 'broker_guarded'>): BrokerConfig {
  const login = extras.broker_guarded ? brokerCredential(record) : undefined;
  return login ? { ...config, ...login } : config;
}
