import { randomBytes } from 'node:crypto';
import { MqttConnection } from '../mqtt/client.ts';
import type { BrokerConfig } from '../mqtt/broker-config.ts';
import { brokerForJob } from './broker-resolve.ts';
import { withJobLogin } from './event-auth.ts';
import { buildPayload, MAX_DETAIL_CHARS, MAX_PAYLOAD_BYTES } from './event-payload.ts';
import { eventsTopic } from './paths.ts';
import { isoSeconds, type JobRegistry } from './registry.ts';
import type { JobEventName, JobEventPayload } from './types.ts';

export interface PublishRequest {
  registry: JobRegistry;
  jobId: string;
  event: JobEventName;
  detail?: string;
  data?: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  /** Overrides the broker stored for the job. */
  broker?: BrokerConfig;
  /** Reuse an open connection instead of opening one for this event. */
  connection?: MqttConnection;
  /** How long to wait for the broker's PUBACK, reconnects included (default 30 s). */
  timeoutMs?: number;
  /** Called right before the payload is handed to MQTT (for latency measurements). */
  onSend?: (payload: JobEventPayload) => void;
  signal?: AbortSignal;
}

export class PublishError extends Error {}

/** The event is over the size limits; nothing was sent and no seq was taken. */
export class EventTooLargeError extends PublishError {}

/**
 * The seed's publish_event: takes `last_seq + 1` under the registry lock (moving the status with it),
 * then publishes on `<topic_prefix>/events` with QoS 1, not retained, and waits for the PUBACK.
 * Events of a job with a token are signed with it (`data.hmac_sig`); compat jobs have none.
 */
export async function publishJobEvent(request: PublishRequest): Promise<JobEventPayload> {
  assertWithinLimits(request);
  const record = await request.registry.get(request.jobId);
  const extras = await request.registry.getExtras(request.jobId);
  const broker = withJobLogin(brokerForJob(record, extras, request.env, request.broker), record, extras);
  const timeoutMs = request.timeoutMs ?? 30_000;
  const connection =
    request.connection ??
    (await MqttConnection.open(broker, {
      clientId: `${clientPrefix(request.env)}-pub-${request.jobId}-${randomBytes(3).toString('hex')}`,
      clean: true,
      connectTimeoutMs: timeoutMs,
      ...(request.signal ? { signal: request.signal } : {}),
    }));
  try {
    const { seq } = await request.registry.reserveSeq(request.jobId, request.event);
    const payload = buildPayload({
      seq,
      jobId: request.jobId,
      event: request.event,
      timestamp: isoSeconds(new Date()),
      detail: request.detail ?? '',
      ...(request.data ? { data: request.data } : {}),
      token: record.auth_token,
    });
    request.onSend?.(payload);
    await withTimeout(
      connection.publish(eventsTopic(record.topic_prefix), JSON.stringify(payload), { qos: 1, retain: false }),
      timeoutMs,
      `the broker did not acknowledge event seq=${seq} for job ${request.jobId} within ${timeoutMs} ms`,
    );
    return payload;
  } finally {
    if (!request.connection) await connection.close(true);
  }
}

/** Refuses, before a seq is taken, an event the subscriber would drop for its size. */
function assertWithinLimits(request: PublishRequest): void {
  const detail = request.detail ?? '';
  if (detail.length > MAX_DETAIL_CHARS) {
    throw new EventTooLargeError(
      `--detail is ${detail.length} characters; the limit is ${MAX_DETAIL_CHARS}: send a summary and put the full text in a file`,
    );
  }
  // Everything but the detail and data (ids, seq, timestamp, signature) is a few hundred bytes at most.
  const bytes = Buffer.byteLength(JSON.stringify({ detail, data: request.data ?? {} })) + 1024;
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new EventTooLargeError(`the event would be about ${bytes} bytes; the limit is ${MAX_PAYLOAD_BYTES}: shorten --detail or --data`);
  }
}

export function clientPrefix(env: NodeJS.ProcessEnv): string {
  const prefix = env.MQTT_CLIENT_ID_PREFIX?.trim();
  return prefix && /^[A-Za-z0-9_-]{1,32}$/.test(prefix) ? prefix : 'refinery';
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PublishError(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
