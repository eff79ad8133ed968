import { z } from 'zod';
import { rememberSecret } from '../../security/known-secrets.ts';
import { readConfigSection } from '../config/config-yaml.ts';
import { TELEMETRY_CONFIG_FILE } from './configured.ts';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TelemetrySettings {
  /** The full URL spans are posted to (…/v1/traces), without credentials: safe to print. */
  tracesUrl: string;
  protocol: OtlpProtocol;
  /** Header name -> value. The values are secrets: never printed, never written. */
  headers: Record<string, string>;
  serviceName: string;
  /** Resource attributes besides service.name. */
  resourceAttributes: Record<string, string>;
  /** How long one export request may take, in ms (OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT). */
  exportTimeoutMs: number;
}

/**
 * An export request's default time limit. Lower than the specification's 10 s: the flush at a
 * run's end gives up after 2 s anyway, so that a collector that never answers does not hold the
 * run; OTEL_EXPORTER_OTLP_TIMEOUT may set another for the exports during a run.
 */
export const DEFAULT_EXPORT_TIMEOUT_MS = 2_000;

/** The export timeout the variables set, in ms; a value that is not a positive whole number is named in a warning. */
function exportTimeout(env: NodeJS.ProcessEnv, warnings: string[]): number {
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    const raw = env[variable]?.trim();
    if (!raw) continue;
    if (/^[1-9][0-9]{0,8}$/.test(raw)) return Number(raw);
    warnings.push(`traces: ${variable}=${raw} is not a whole number of milliseconds; using ${DEFAULT_EXPORT_TIMEOUT_MS}`);
    return DEFAULT_EXPORT_TIMEOUT_MS;
  }
  return DEFAULT_EXPORT_TIMEOUT_MS;
}

export type TelemetryResolution = { settings: TelemetrySettings | undefined; warnings: string[] } | { error: string };

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');

const telemetrySchema = z.strictObject({
  /** Off without removing the section. */
  enabled: z.boolean().default(true),
  /** The collector's base URL; /v1/traces is appended (as with OTEL_EXPORTER_OTLP_ENDPOINT). */
  endpoint: z.string().min(1).optional(),
  /** The full traces URL (as with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). */
  traces_endpoint: z.string().min(1).optional(),
  protocol: z.enum(['http/protobuf', 'http/json']).optional(),
  service_name: z.string().min(1).optional(),
  resource_attributes: z.record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()])).default({}),
  /** Header name -> the environment variable holding its value (`Authorization: LOGFIRE_TOKEN`). */
  headers_from_env: z.record(headerName, envName).default({}),
});

type FileConfig = z.output<typeof telemetrySchema>;

function readFileConfig(root: string): { config?: FileConfig; error?: string } {
  return readConfigSection(root, TELEMETRY_CONFIG_FILE, 'telemetry', telemetrySchema, 'telemetry');
}

/** `k=v,k2=v2` with percent-encoded values (the W3C baggage form the OTEL_* lists use). */
export function parseKeyValueList(raw: string, source: string): { values: Record<string, string> } | { error: string } {
  const out: Record<string, string> = {};
  for (const part of raw.split(',')) {
    if (part.trim() === '') continue;
    const eq = part.indexOf('=');
    const key = eq < 0 ? '' : part.slice(0, eq).trim();
    // The value may be a secret: never echoed.
    if (!key) return { error: `${source}: expected key=value pairs separated by commas` };
    let value: string;
    try {
      value = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return { error: `${source}: the value of '${key}' is not valid percent-encoding` };
    }
    out[key] = value;
  }
  return { values: out };
}

/** The traces URL from a base endpoint (…/v1/traces appended) or a full one; credentials in it are refused. */
function tracesUrl(raw: string, source: string, appendPath: boolean): string | { error: string } {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return { error: `${source}: not a URL; expected http(s)://host:port` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return {
      error: `${source}: ${url.protocol} is not supported; refinery sends OTLP over HTTP (http:// or https://, port 4318 for a collector)`,
    };
  if (url.username || url.password)
    return { error: `${source}: credentials do not go in the URL; put them in OTEL_EXPORTER_OTLP_HEADERS (or telemetry.headers_from_env)` };
  if (appendPath) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

function protocolOf(raw: string | undefined, source: string): OtlpProtocol | undefined | { error: string } {
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = raw.trim();
  if (value === 'http/protobuf' || value === 'http/json') return value;
  if (value === 'grpc')
    return { error: `${source}=grpc: refinery sends OTLP over HTTP only; use http/protobuf (port 4318 on a collector)` };
  return { error: `${source}=${value}: expected http/protobuf or http/json` };
}

function validHeaders(headers: Record<string, string>, source: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return `${source}: '${name}' is not an HTTP header name`;
    if (/[\r\n\0]/.test(value)) return `${source}: the value of '${name}' holds a line break; a header value is one line`;
  }
  return undefined;
}

function remember(headers: Record<string, string>): void {
  for (const value of Object.values(headers)) {
    rememberSecret(value);
    // "Bearer <token>": the token alone is a secret too, wherever it shows up.
    for (const word of value.split(/\s+/)) rememberSecret(word);
  }
}

/** Trace export for this run, if any; an error (exit 2) for a configuration that cannot be right. */
export function resolveTelemetry(root: string, env: NodeJS.ProcessEnv): TelemetryResolution {
  const off = { settings: undefined, warnings: [] };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return off;
  const exporters = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporters === 'none') return off;
  const file = readFileConfig(root);
  if (file.error) return { error: file.error };
  const config = file.config;
  if (config && !config.enabled && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !env.OTEL_EXPORTER_OTLP_ENDPOINT) return off;
  const where = `${TELEMETRY_CONFIG_FILE} telemetry`;
  const chosen = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
    ? { raw: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, source: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', append: false }
    : env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
      ? { raw: env.OTEL_EXPORTER_OTLP_ENDPOINT, source: 'OTEL_EXPORTER_OTLP_ENDPOINT', append: true }
      : config?.traces_endpoint
        ? { raw: config.traces_endpoint, source: `${where}.traces_endpoint`, append: false }
        : config?.endpoint
          ? { raw: config.endpoint, source: `${where}.endpoint`, append: true }
          : undefined;
  if (!chosen) {
    if (config) return { error: `${where}: give endpoint (the collector's base URL, e.g. http://127.0.0.1:4318) or traces_endpoint` };
    return off;
  }
  const url = tracesUrl(chosen.raw, chosen.source, chosen.append);
  if (typeof url !== 'string') return url;
  const protocol =
    protocolOf(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    protocolOf(env.OTEL_EXPORTER_OTLP_PROTOCOL, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
    config?.protocol ??
    'http/protobuf';
  if (typeof protocol !== 'string') return protocol;
  const warnings: string[] = [];
  const headers: Record<string, string> = {};
  for (const [name, variable] of Object.entries(config?.headers_from_env ?? {})) {
    const value = env[variable];
    if (value === undefined || value === '') {
      warnings.push(`traces: ${variable} (telemetry.headers_from_env.${name}) is not set; spans go without the ${name} header`);
      continue;
    }
    headers[name] = value;
  }
  for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    const raw = env[variable];
    if (!raw) continue;
    const parsed = parseKeyValueList(raw, variable);
    if ('error' in parsed) return parsed;
    Object.assign(headers, parsed.values);
  }
  const bad = validHeaders(headers, 'OTLP headers');
  if (bad) return { error: bad };
  remember(headers);
  const resourceAttributes: Record<string, string> = Object.fromEntries(
    Object.entries(config?.resource_attributes ?? {}).map(([k, v]) => [k, String(v)]),
  );
  if (env.OTEL_RESOURCE_ATTRIBUTES) {
    const parsed = parseKeyValueList(env.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES');
    if ('error' in parsed) return parsed;
    Object.assign(resourceAttributes, parsed.values);
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || resourceAttributes['service.name'] || config?.service_name || 'refinery';
  delete resourceAttributes['service.name'];
  if (Object.keys(headers).length > 0 && url.startsWith('http:') && !isLoopback(url))
    warnings.push(`traces: ${url} is plain HTTP; the OTLP headers (a write token) cross the network unencrypted (use https://)`);
  const exportTimeoutMs = exportTimeout(env, warnings);
  return { settings: { tracesUrl: url, protocol, headers, serviceName, resourceAttributes, exportTimeoutMs }, warnings };
}

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
}
