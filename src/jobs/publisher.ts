import { randomBytes } from 'node:crypto';
import { MqttConnection } from '../mqtt/client.ts';
import type { BrokerConfig } from '../mqtt/broker-config.ts';
import { brokerForJob } from './broker-resolve.ts';
import { buildPayload } from './event-payload.ts';
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

/**
 * The seed's publish_event: takes `last_seq + 1` under the registry lock (moving the status with it),
 * then publishes on `<topic_prefix>/events` with QoS 1, not retained, and waits for the PUBACK.
 * The job token travels in `data.auth_token`; compat jobs have none.
 */
export async function publishJobEvent(request: PublishRequest): Promise<JobEventPayload> {
  const record = await request.registry.get(request.jobId);
  const extras = await request.registry.getExtras(request.jobId);
  const broker = brokerForJob(record, extras, request.env, request.broker);
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
