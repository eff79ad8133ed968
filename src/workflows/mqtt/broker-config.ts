/** Where an MQTT client connects, resolved from a URL, environment variables or a job record. */
export interface BrokerConfig {
  /** mqtt:, mqtts:, ws: or wss: URL without credentials, e.g. `mqtt://127.0.0.1:1883`. */
  url: string;
  username?: string;
  password?: string;
  /** Paths of PEM files for TLS. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

export const BROKER_PROTOCOLS = ['mqtt:', 'mqtts:', 'ws:', 'wss:'] as const;

const DEFAULT_PORTS: Record<string, number> = { 'mqtt:': 1883, 'mqtts:': 8883, 'ws:': 80, 'wss:': 443 };

export class BrokerConfigError extends Error {}

/** Parses `--broker URL`; user and password may sit in the URL, both are moved out of it. */
export function brokerFromUrl(raw: string, tls: Pick<BrokerConfig, 'caFile' | 'certFile' | 'keyFile'> = {}): BrokerConfig {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new BrokerConfigError(`--broker '${redactUrl(raw)}' is not a URL; use mqtt://HOST:PORT (or mqtts:, ws:, wss:)`);
  }
  if (!(BROKER_PROTOCOLS as readonly string[]).includes(parsed.protocol)) {
    throw new BrokerConfigError(`--broker: unsupported protocol '${parsed.protocol}'; use one of ${BROKER_PROTOCOLS.join(' ')}`);
  }
  if (!parsed.hostname) throw new BrokerConfigError(`--broker '${redactUrl(raw)}' has no host`);
  const username = parsed.username ? decodeURIComponent(parsed.username) : undefined;
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  parsed.username = '';
  parsed.password = '';
  const port = parsed.port || String(DEFAULT_PORTS[parsed.protocol]);
  const pathPart = parsed.protocol.startsWith('ws') ? parsed.pathname || '/mqtt' : '';
  const url = `${parsed.protocol}//${bracketHost(parsed.hostname)}:${port}${pathPart === '/' ? '/mqtt' : pathPart}`;
  return dropUndefined({ url, username, password, ...tls });
}

/** The seed's variables: MQTT_BROKER (host or URL), MQTT_PORT, MQTT_TLS, MQTT_USERNAME, MQTT_PASSWORD, MQTT_CA_CERTS, MQTT_CERTFILE, MQTT_KEYFILE. */
export function brokerFromEnv(env: NodeJS.ProcessEnv): BrokerConfig | undefined {
  const host = env.MQTT_BROKER?.trim();
  if (!host) return undefined;
  const tlsFiles = tlsFromEnv(env);
  if (host.includes('://')) return withEnvCredentials(brokerFromUrl(host, tlsFiles), env);
  const tls = isTruthy(env.MQTT_TLS);
  const port = env.MQTT_PORT?.trim() || (tls ? '8883' : '1883');
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
    throw new BrokerConfigError(`MQTT_PORT='${port}' is not a port number (1-65535)`);
  }
  return withEnvCredentials(brokerFromUrl(`${tls ? 'mqtts' : 'mqtt'}://${bracketHost(host)}:${port}`, tlsFiles), env);
}

/** The record's `broker` block as the seed writes it, plus env toggles and secrets (the env overrides MQTT_TLS). */
export function brokerFromRecordBlock(
  block: { host: string; port: number; tls: boolean; username: string | null },
  env: NodeJS.ProcessEnv,
): BrokerConfig {
  const tls = env.MQTT_TLS !== undefined && env.MQTT_TLS !== '' ? isTruthy(env.MQTT_TLS) : block.tls;
  const config = brokerFromUrl(`${tls ? 'mqtts' : 'mqtt'}://${bracketHost(block.host)}:${block.port}`, tlsFromEnv(env));
  return withEnvCredentials({ ...config, ...(block.username ? { username: block.username } : {}) }, env);
}

/** Adds MQTT_USERNAME / MQTT_PASSWORD / TLS files from the environment where the config has none. */
export function withEnvCredentials(config: BrokerConfig, env: NodeJS.ProcessEnv): BrokerConfig {
  return dropUndefined({
    ...tlsFromEnv(env),
    ...config,
    username: config.username ?? (env.MQTT_USERNAME || undefined),
    password: config.password ?? (env.MQTT_PASSWORD || undefined),
  });
}

/** Host, port and TLS flag in the shape of the seed record's `broker` block (never the password). */
export function recordBlockOf(config: BrokerConfig): { host: string; port: number; tls: boolean; username: string | null; password: null } {
  const parsed = new URL(config.url);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ''),
    port: Number(parsed.port),
    tls: parsed.protocol === 'mqtts:' || parsed.protocol === 'wss:',
    username: config.username ?? null,
    password: null,
  };
}

/** A URL safe to print: credentials replaced by `***`. */
export function redactUrl(raw: string): string {
  return raw.replace(/^([a-z]+:\/\/)([^@/]*)@/i, '$1***@');
}

function tlsFromEnv(env: NodeJS.ProcessEnv): Pick<BrokerConfig, 'caFile' | 'certFile' | 'keyFile'> {
  return dropUndefined({
    caFile: env.MQTT_CA_CERTS || undefined,
    certFile: env.MQTT_CERTFILE || undefined,
    keyFile: env.MQTT_KEYFILE || undefined,
  });
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase());
}

function bracketHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
