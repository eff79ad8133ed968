// mqtt.js enters the project here and nowhere else.
import { readFileSync } from 'node:fs';
import { EventEmitter } from 'node:events';
import type { IClientOptions, MqttClient } from 'mqtt';
// The connect entry alone loads in a quarter of the time of the package index (CLI start-up matters:
// agents run `refinery jobs publish` once per event).
import connectModule from 'mqtt/lib/connect/index';

type ConnectFn = (url: string, options: IClientOptions) => MqttClient;
// CommonJS interop differs between loaders (node/tsx give module.exports, vite gives the default).
const connect: ConnectFn =
  typeof (connectModule as unknown) === 'function' ? (connectModule as unknown as ConnectFn) : (connectModule.default as ConnectFn);
import { redactUrl, type BrokerConfig } from './broker-config.ts';

export interface ConnectOptions {
  clientId: string;
  /** false keeps the broker-side session (subscriptions and queued QoS 1 messages) across reconnects. */
  clean: boolean;
  /** How long the first connection may take before connectMqtt rejects. */
  connectTimeoutMs?: number;
  /** Delay between reconnect attempts. */
  reconnectPeriodMs?: number;
  keepaliveSec?: number;
  signal?: AbortSignal;
  /**
   * MQTT 5 (default 3.1.1): with `clean: false`, the broker keeps the session this many seconds
   * after a disconnect (shared subscriptions and their queued messages survive a restart).
   */
  mqtt5?: { sessionExpirySec: number };
}

export interface IncomingMessage {
  topic: string;
  payload: Buffer;
  qos: number;
  retain: boolean;
  /** True when the broker marked it as a redelivery. */
  dup: boolean;
}

export interface ConnectionEvents {
  message: [IncomingMessage];
  /** A reconnect completed; sessionPresent tells whether the broker kept the session. */
  reconnected: [{ sessionPresent: boolean }];
  offline: [];
  error: [Error];
}

/** One MQTT connection with promise-based publish/subscribe; reconnects by itself. */
export class MqttConnection extends EventEmitter<ConnectionEvents> {
  private constructor(
    private readonly client: MqttClient,
    readonly url: string,
  ) {
    super();
    client.on('message', (topic, payload, packet) => {
      this.emit('message', { topic, payload, qos: packet.qos, retain: packet.retain, dup: packet.dup });
    });
    client.on('connect', (connack) => this.emit('reconnected', { sessionPresent: connack.sessionPresent }));
    client.on('offline', () => this.emit('offline'));
    client.on('error', (error) => {
      if (this.listenerCount('error') > 0) this.emit('error', error);
    });
  }

  static async open(config: BrokerConfig, options: ConnectOptions): Promise<MqttConnection> {
    const client = connect(config.url, clientOptions(config, options));
    // Each message goes out at once, not held back until the last is acknowledged (Nagle's
    // algorithm): small QoS 1 messages otherwise wait for a delayed ACK.
    client.on('connect', () => (client.stream as { setNoDelay?: (on: boolean) => unknown }).setNoDelay?.(true));
    const timeoutMs = options.connectTimeoutMs ?? 10_000;
    try {
      await firstConnect(client, config.url, timeoutMs, options.signal);
    } catch (error) {
      client.end(true);
      throw error;
    }
    return new MqttConnection(client, config.url);
  }

  get connected(): boolean {
    return this.client.connected;
  }

  /** Resolves once the broker acknowledged (PUBACK for QoS 1); queued while offline. */
  async publish(topic: string, payload: string, options: { qos: 0 | 1; retain: boolean }): Promise<void> {
    await this.client.publishAsync(topic, payload, { qos: options.qos, retain: options.retain });
  }

  /** Resolves with the granted QoS per topic once the broker sent SUBACK; rejects when the broker refused one. */
  async subscribe(topics: string[], qos: 0 | 1): Promise<void> {
    let granted;
    try {
      granted = await this.client.subscribeAsync(topics, { qos });
    } catch (error) {
      // mqtt.js rejects a SUBACK with a failure code itself, naming no topic.
      if (/^Subscribe error/.test((error as Error).message)) throw new Error(`broker refused subscription to ${topics.join(', ')}`);
      throw error;
    }
    const refused = granted.filter((grant) => grant.qos === 128);
    if (refused.length > 0) throw new Error(`broker refused subscription to ${refused.map((g) => g.topic).join(', ')}`);
  }

  async unsubscribe(topics: string[]): Promise<void> {
    if (this.client.connected) await this.client.unsubscribeAsync(topics);
  }

  /**
   * Disconnects; force=false waits for in-flight messages to be acknowledged first. `endSession`
   * (MQTT 5) tells the broker to drop the session now rather than keep it for its expiry.
   */
  async close(force = false, endSession = false): Promise<void> {
    if (endSession && this.client.connected && this.client.options.protocolVersion === 5) {
      await new Promise<void>((resolve) => this.client.end(force, { properties: { sessionExpiryInterval: 0 } }, () => resolve()));
      return;
    }
    await this.client.endAsync(force);
  }
}

function clientOptions(config: BrokerConfig, options: ConnectOptions): IClientOptions {
  const tls = /^(mqtts|wss):/.test(config.url);
  return {
    clientId: options.clientId,
    clean: options.clean,
    ...(options.mqtt5
      ? { protocolVersion: 5 as const, properties: { sessionExpiryInterval: options.mqtt5.sessionExpirySec } }
      : { protocolVersion: 4 as const }),
    keepalive: options.keepaliveSec ?? 30,
    reconnectPeriod: options.reconnectPeriodMs ?? 500,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    resubscribe: true,
    ...(config.username !== undefined ? { username: config.username } : {}),
    ...(config.password !== undefined ? { password: config.password } : {}),
    ...(tls && config.caFile ? { ca: readPem(config.caFile, 'CA bundle (MQTT_CA_CERTS)') } : {}),
    ...(tls && config.certFile ? { cert: readPem(config.certFile, 'client certificate (MQTT_CERTFILE)') } : {}),
    ...(tls && config.keyFile ? { key: readPem(config.keyFile, 'client key (MQTT_KEYFILE)') } : {}),
  };
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read the ${what} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

function firstConnect(client: MqttClient, url: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let lastError: Error | undefined;
    const finish = (error?: Error): void => {
      clearTimeout(timer);
      client.off('connect', onConnect);
      client.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const onConnect = (): void => finish();
    const onError = (error: Error): void => {
      lastError = error;
      // A refused CONNECT (bad credentials, not authorized) will not get better by retrying.
      if ('code' in error && typeof error.code === 'number') finish(connectError(url, error));
    };
    const onAbort = (): void => finish(new Error(`connecting to ${redactUrl(url)} was aborted`));
    const timer = setTimeout(() => finish(connectError(url, lastError ?? new Error(`no CONNACK within ${timeoutMs} ms`))), timeoutMs);
    client.on('connect', onConnect);
    client.on('error', onError);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function connectError(url: string, cause: Error): Error {
  return new Error(
    `cannot connect to the MQTT broker ${redactUrl(url)}: ${cause.message}. ` +
      'Check --broker / MQTT_BROKER and MQTT_PORT, or leave both unset to use an embedded broker.',
  );
}
