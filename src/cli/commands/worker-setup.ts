// What `refinery worker` and `refinery run --workers` both need before they connect: the signing
// key, the project id, the broker (credentials and TLS files from the environment) and a remote
// cache this machine may write. Each problem is said in one line naming the flag or variable.
import type { CommandIo } from '../command.ts';
import { workerKey } from '../../engine/dispatch/envelope.ts';
import { projectId } from '../../engine/config/project-id.ts';
import type { RemoteCacheSettings } from '../../engine/remote-cache/config.ts';
import { resolveRemoteCache } from '../../engine/remote-cache/config.ts';
import {
  brokerFromEnv,
  brokerFromUrl,
  withEnvCredentials,
  BrokerConfigError,
  type BrokerConfig,
} from '../../workflows/mqtt/broker-config.ts';
import { redactSecrets, rememberSecret } from '../../security/known-secrets.ts';

export interface WorkerSetup {
  key: Buffer;
  project: string;
  broker: BrokerConfig;
}

/** The key, project and broker; undefined when one is missing (said on stderr). */
export function workerSetup(io: CommandIo, command: string, brokerFlag: string | undefined): WorkerSetup | undefined {
  const fail = (message: string): undefined => {
    io.stderr.write(`refinery ${command}: ${redactSecrets(message)}\n`);
    return undefined;
  };
  const key = workerKey(io.env);
  if ('error' in key) return fail(key.error);
  const project = projectId(io.cwd);
  if ('error' in project) return fail(project.error);
  let broker: BrokerConfig | undefined;
  try {
    broker = brokerFlag ? withEnvCredentials(brokerFromUrl(brokerFlag), io.env) : brokerFromEnv(io.env);
  } catch (error) {
    if (error instanceof BrokerConfigError) return fail(error.message);
    throw error;
  }
  if (!broker)
    return fail(
      'no broker: give --broker mqtt://HOST:PORT (or set MQTT_BROKER); MQTT_USERNAME, MQTT_PASSWORD and MQTT_CA_CERTS add credentials and TLS',
    );
  rememberSecret(broker.password);
  return { key: key.key, project: project.id, broker };
}

/** The remote cache, which must be set and writable here; undefined when not (said on stderr). */
export function writableRemoteCache(
  io: CommandIo,
  command: string,
  flagUrl: string | undefined,
  why: string,
): RemoteCacheSettings | undefined {
  const resolved = resolveRemoteCache({ root: io.cwd, env: io.env, ...(flagUrl !== undefined ? { flagUrl } : {}) });
  if ('error' in resolved) {
    io.stderr.write(`refinery ${command}: ${redactSecrets(resolved.error)}\n`);
    return undefined;
  }
  for (const w of resolved.warnings) io.stderr.write(`refinery: warning: ${redactSecrets(w)}\n`);
  const settings = resolved.settings;
  if (!settings || settings.readOnly) {
    io.stderr.write(
      `refinery ${command}: ${settings ? 'the remote cache is read-only here' : 'no remote cache'}: ${why}; give --remote-cache URL (or REFINERY_REMOTE_CACHE) of a cache this machine may write\n`,
    );
    return undefined;
  }
  return settings;
}

/** `--pools llm=4,io=2` (repeatable): pool name -> size. */
export function parsePools(values: readonly string[]): Record<string, number> | { error: string } {
  const pools: Record<string, number> = {};
  for (const part of values.flatMap((v) => v.split(','))) {
    const m = /^([A-Za-z0-9_-]+)=(\d+)$/.exec(part.trim());
    if (!m || Number(m[2]) < 1) return { error: `--pools ${part}: expected NAME=N with N ≥ 1, e.g. llm=4` };
    pools[m[1] as string] = Number(m[2]);
  }
  return pools;
}

/** A number of seconds from a flag, as milliseconds; an error naming the flag when it is not one. */
export function secondsFlag(name: string, raw: string | undefined, fallbackS: number): { ms: number } | { error: string } {
  if (raw === undefined) return { ms: fallbackS * 1000 };
  const value = Number(raw);
  return Number.isFinite(value) && value > 0
    ? { ms: Math.round(value * 1000) }
    : { error: `--${name} ${raw}: expected a number of seconds > 0` };
}
