// The engine's WorkerTransport over an MQTT 5 connection: QoS 1 both ways, a persistent session
// (clean start off, a session expiry), so a broker restart or a dropped link loses no job.
import os from 'node:os';
import type { WorkerTransport } from '../../engine/dispatch/transport.ts';
import type { BrokerConfig } from '../mqtt/broker-config.ts';
import { MqttConnection } from '../mqtt/client.ts';

export interface TransportOptions {
  broker: BrokerConfig;
  /** Stable across restarts for a worker (its session is found again); unique per run for a coordinator. */
  clientId: string;
  sessionExpirySec: number;
  signal?: AbortSignal;
}

export interface OpenTransport extends WorkerTransport {
  /** `endSession`: the broker drops the session now (a worker that stops for good). */
  close(endSession?: boolean): Promise<void>;
}

export async function openTransport(options: TransportOptions): Promise<OpenTransport> {
  const connection = await MqttConnection.open(options.broker, {
    clientId: options.clientId,
    clean: false,
    mqtt5: { sessionExpirySec: options.sessionExpirySec },
    reconnectPeriodMs: 250,
    keepaliveSec: 15,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return {
    publish: (topic, payload) => connection.publish(topic, payload, { qos: 1, retain: false }),
    subscribe: (topic) => connection.subscribe([topic], 1),
    unsubscribe: (topic) => connection.unsubscribe([topic]),
    onMessage(listener) {
      const on = (m: { topic: string; payload: Buffer }): void => listener(m.topic, m.payload);
      connection.on('message', on);
      return () => connection.off('message', on);
    },
    onReconnect(listener) {
      const on = (e: { sessionPresent: boolean }): void => listener(e.sessionPresent);
      connection.on('reconnected', on);
      return () => connection.off('reconnected', on);
    },
    onOffline(listener) {
      connection.on('offline', listener);
      return () => connection.off('offline', listener);
    },
    close: (endSession = false) => connection.close(false, endSession),
  };
}

/** A worker's default name: this host, and which of its clones (two clones on one host are two workers). */
export function defaultWorkerName(rootHash: string): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 60) || 'worker';
  return `${host}-${rootHash.slice(0, 6)}`;
}
