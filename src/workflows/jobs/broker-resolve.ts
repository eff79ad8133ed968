import { brokerFromEnv, brokerFromRecordBlock, brokerFromUrl, withEnvCredentials, type BrokerConfig } from '../mqtt/broker-config.ts';
import type { GuardTopics } from '../broker/topic-guard.ts';
import type { JobExtras, JobRecord } from './types.ts';

export interface BrokerChoice {
  config: BrokerConfig;
  /** 'embedded' when refinery started its own broker for this command. */
  origin: 'flag' | 'env' | 'embedded';
  /** Only for the embedded broker: puts a job's topics behind the job's login. */
  guard?: GuardTopics;
  release(): Promise<void>;
}

export interface BrokerRequest {
  /** `--broker URL`. */
  url?: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  env: NodeJS.ProcessEnv;
}

/** `--broker`, else the seed's MQTT_* variables, else an embedded broker on 127.0.0.1 for this command only. */
export async function acquireBroker(request: BrokerRequest): Promise<BrokerChoice> {
  const tls = dropUndefined({ caFile: request.caFile, certFile: request.certFile, keyFile: request.keyFile });
  if (request.url) {
    return { config: withEnvCredentials(brokerFromUrl(request.url, tls), request.env), origin: 'flag', release: async () => {} };
  }
  const fromEnv = brokerFromEnv(request.env);
  if (fromEnv) return { config: { ...fromEnv, ...tls }, origin: 'env', release: async () => {} };
  // Loaded on demand: publishers and waiters never need the broker code.
  const { startEmbeddedBroker } = await import('../broker/embedded-broker.ts');
  const broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
  return { config: { url: broker.url }, origin: 'embedded', guard: broker.guard, release: () => broker.close() };
}

/** Where a job's events go: the URL refinery stored for it, else the record's broker block; secrets from the env. */
export function brokerForJob(record: JobRecord, extras: JobExtras, env: NodeJS.ProcessEnv, override?: BrokerConfig): BrokerConfig {
  if (override) return override;
  if (extras.broker_url) {
    const config = withEnvCredentials(brokerFromUrl(extras.broker_url), env);
    return record.broker.username ? { ...config, username: record.broker.username } : config;
  }
  return brokerFromRecordBlock(record.broker, env);
}

/** True when the record's host/port/tls block cannot say where the broker is (ws, wss, a path). */
export function needsBrokerUrl(config: BrokerConfig): boolean {
  return /^wss?:/.test(config.url);
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
