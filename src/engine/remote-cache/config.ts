// Where the remote cache is and how to talk to it: `--remote-cache URL`, else REFINERY_REMOTE_CACHE,
// else `remote_cache:` in refinery.config.yaml. Secrets come only from the environment (header
// values named by `headers_from_env`, credentials in the URL of the flag or the variable), and
// every one is registered for redaction before any request is made.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { rememberSecret } from '../../security/known-secrets.ts';
import { REMOTE_CACHE_CONFIG_FILE } from './configured.ts';
import { readConfigSection } from '../config/config-yaml.ts';

export interface RemoteCacheSettings {
  /** Without credentials and without a trailing slash: safe to print. */
  baseUrl: string;
  readOnly: boolean;
  headers: Record<string, string>;
  /** Entries must carry a valid Ed25519 signature by this key. */
  verifyKey?: KeyObject;
  /** Entries this run uploads are signed with it. */
  signingKey?: KeyObject;
  concurrency: number;
  maxBlobBytes: number;
  idleTimeoutMs: number;
  /** The least total time any request gets. */
  deadlineFloorMs: number;
  /** A transfer's total time is its bytes at this rate (when that is over the floor). */
  minRateBytesPerSec: number;
  /** Where the URL came from, for messages. */
  source: string;
}

export interface RemoteCacheRequest {
  root: string;
  env: NodeJS.ProcessEnv;
  /** `--remote-cache URL`. */
  flagUrl?: string;
  /** `--remote-cache-read-only`. */
  flagReadOnly?: boolean;
  /** `--no-remote-cache`. */
  flagOff?: boolean;
  configFile?: string;
}

export type RemoteCacheResolution = { settings: RemoteCacheSettings | undefined; warnings: string[] } | { error: string };

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name');

const remoteCacheSchema = z.strictObject({
  url: z.string().min(1).optional(),
  read_only: z.boolean().default(false),
  /** Header name -> the environment variable holding its value (`Authorization: CACHE_AUTH`). */
  headers_from_env: z.record(headerName, envName).default({}),
  /** An Ed25519 public key (PEM file, relative to the project): entries must be signed by its private key. */
  verify_key: z.string().min(1).optional(),
  /** The environment variable holding the Ed25519 private key (PEM) that signs uploads. */
  signing_key_env: envName.optional(),
  concurrency: z.int().min(1).max(64).default(8),
  max_blob_mb: z.number().positive().max(65_536).default(256),
  /** A request that receives or sends nothing for this long is abandoned. */
  timeout_s: z.number().positive().max(600).default(30),
  /** The least total time a request gets; a transfer gets its size at min_rate_kib_s when that is longer. */
  deadline_floor_s: z.number().positive().max(600).default(10),
  /** A transfer slower than this (over its whole length) is abandoned and the cache is off for the run. */
  min_rate_kib_s: z.number().positive().max(1_048_576).default(256),
});

type FileConfig = z.output<typeof remoteCacheSchema>;

const OFF = new Set(['', 'off', 'none', 'false', '0']);

function truthy(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.trim().toLowerCase());
}

/** The `remote_cache:` section; undefined when the file or the section is absent. */
function readFileConfig(root: string, file: string): { config?: FileConfig; error?: string } {
  return readConfigSection(root, file, 'remote_cache', remoteCacheSchema, 'remote cache');
}

/** Splits credentials out of a URL: they become an Authorization header and are remembered as secrets. */
function parseUrl(raw: string, source: string, allowCredentials: boolean): { baseUrl: string; authorization?: string } | { error: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The text may hold credentials: it is not echoed.
    return { error: `${source}: not a URL; expected http(s)://host[:port][/prefix]` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { error: `${source}: ${url.protocol} is not supported; the cache speaks HTTP (http:// or https://)` };
  if (url.search || url.hash) return { error: `${source}: a cache URL has no query or fragment` };
  let authorization: string | undefined;
  if (url.username || url.password) {
    if (!allowCredentials)
      return {
        error: `${source}: credentials never go in the config file; put them in REFINERY_REMOTE_CACHE or in a header named by remote_cache.headers_from_env`,
      };
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    const token = Buffer.from(`${user}:${password}`).toString('base64');
    rememberSecret(password);
    rememberSecret(token);
    authorization = `Basic ${token}`;
    url.username = '';
    url.password = '';
  }
  const baseUrl = url.toString().replace(/\/+$/, '');
  // bazel-remote cleans paths: `//`, `./` and `../` in a prefix would be rewritten under us.
  if (/\/\/|\/\.\.?(\/|$)/.test(url.pathname))
    return { error: `${source}: the path ${url.pathname} has '//', './' or '../'; give a plain prefix` };
  return { baseUrl, ...(authorization ? { authorization } : {}) };
}

function readKey(root: string, file: string, kind: 'public' | 'private', pem?: string): KeyObject | string {
  try {
    const text = pem ?? readFileSync(path.resolve(root, file), 'utf8');
    const key = kind === 'public' ? createPublicKey(text) : createPrivateKey(text);
    if (key.asymmetricKeyType !== 'ed25519')
      return `${file}: an ${key.asymmetricKeyType} key; the remote cache signs with Ed25519 (openssl genpkey -algorithm ed25519)`;
    return key;
  } catch (error) {
    return `${file}: not a PEM ${kind} key (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`;
  }
}

function isLoopback(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
}

/** The remote cache this run uses, if any; an error (exit 2) for a config that cannot be right. */
export function resolveRemoteCache(request: RemoteCacheRequest): RemoteCacheResolution {
  if (request.flagOff) return { settings: undefined, warnings: [] };
  const configFile = request.configFile ?? REMOTE_CACHE_CONFIG_FILE;
  const file = readFileConfig(request.root, configFile);
  if (file.error) return { error: file.error };
  // Empty is unset (a CI secret a fork's pull request does not get); `off` turns the cache off.
  const fromEnv = request.env.REFINERY_REMOTE_CACHE || undefined;
  const chosen =
    request.flagUrl !== undefined
      ? { raw: request.flagUrl, source: '--remote-cache', credentials: true }
      : fromEnv !== undefined
        ? { raw: fromEnv, source: 'REFINERY_REMOTE_CACHE', credentials: true }
        : file.config?.url !== undefined
          ? { raw: file.config.url, source: `${configFile} remote_cache.url`, credentials: false }
          : undefined;
  if (!chosen || OFF.has(chosen.raw.trim().toLowerCase())) return { settings: undefined, warnings: [] };
  const url = parseUrl(chosen.raw.trim(), chosen.source, chosen.credentials);
  if ('error' in url) return { error: url.error };
  const config = file.config ?? remoteCacheSchema.parse({});
  const warnings: string[] = [];
  const headers: Record<string, string> = {};
  if (url.authorization) headers.authorization = url.authorization;
  for (const [name, variable] of Object.entries(config.headers_from_env)) {
    const value = request.env[variable];
    if (value === undefined || value === '') {
      warnings.push(`remote cache: ${variable} (remote_cache.headers_from_env.${name}) is not set; requests go without the ${name} header`);
      continue;
    }
    if (/[\r\n\0]/.test(value))
      return { error: `${variable} (remote_cache.headers_from_env.${name}) holds a line break; a header value is one line` };
    rememberSecret(value);
    // "Bearer <token>": the token alone is a secret too, wherever it shows up.
    for (const word of value.split(/\s+/)) rememberSecret(word);
    headers[name.toLowerCase()] = value;
  }
  let verifyKey: KeyObject | undefined;
  if (config.verify_key) {
    const key = readKey(request.root, config.verify_key, 'public');
    if (typeof key === 'string') return { error: `remote_cache.verify_key: ${key}` };
    verifyKey = key;
  }
  let signingKey: KeyObject | undefined;
  if (config.signing_key_env) {
    const pem = request.env[config.signing_key_env];
    if (pem) {
      rememberSecret(pem);
      const key = readKey(request.root, config.signing_key_env, 'private', pem);
      if (typeof key === 'string') return { error: `remote_cache.signing_key_env: ${key}` };
      signingKey = key;
    }
  }
  let readOnly = request.flagReadOnly === true || truthy(request.env.REFINERY_REMOTE_CACHE_READ_ONLY) || config.read_only;
  if (!readOnly && verifyKey && !signingKey) {
    // Entries without a signature would be refused by every reader: reading is all this run can do.
    warnings.push(
      `remote cache: entries must be signed (remote_cache.verify_key) and ${config.signing_key_env ?? 'remote_cache.signing_key_env'} holds no key; this run only reads`,
    );
    readOnly = true;
  }
  if (
    verifyKey &&
    signingKey &&
    !createPublicKey(signingKey)
      .export({ format: 'der', type: 'spki' })
      .equals(verifyKey.export({ format: 'der', type: 'spki' }))
  ) {
    return {
      error: `remote_cache: the key in ${config.signing_key_env} does not match remote_cache.verify_key (${config.verify_key}); readers would refuse every entry`,
    };
  }
  if (!url.baseUrl.startsWith('https:') && !isLoopback(url.baseUrl)) {
    warnings.push(
      `remote cache: ${url.baseUrl} is plain HTTP; artifacts, prompts and answers cross the network unencrypted (use https://)`,
    );
  }
  return {
    settings: {
      baseUrl: url.baseUrl,
      readOnly,
      headers,
      ...(verifyKey ? { verifyKey } : {}),
      ...(signingKey ? { signingKey } : {}),
      concurrency: config.concurrency,
      maxBlobBytes: Math.round(config.max_blob_mb * 1024 * 1024),
      idleTimeoutMs: Math.round(config.timeout_s * 1000),
      deadlineFloorMs: Math.round(config.deadline_floor_s * 1000),
      minRateBytesPerSec: Math.round(config.min_rate_kib_s * 1024),
      source: chosen.source,
    },
    warnings,
  };
}
