// Options and helpers shared by the `refinery jobs` subcommands.
import type { CommandIo } from '../command.ts';
import { brokerFromUrl, type BrokerConfig } from '../../workflows/mqtt/broker-config.ts';
import { assertJobId } from '../../workflows/jobs/job-id.ts';
import type { WatchDiagnostic } from '../../workflows/jobs/job-watch.ts';
import { registryPaths, type RegistryPaths } from '../../workflows/jobs/paths.ts';

/** A bad flag or argument: exit code 64. */
export class UsageError extends Error {}

export const COMMON = {
  'registry-dir': { type: 'string' },
  broker: { type: 'string' },
  'broker-ca': { type: 'string' },
  'broker-cert': { type: 'string' },
  'broker-key': { type: 'string' },
  json: { type: 'boolean' },
} as const;

export function pathsOf(values: { 'registry-dir'?: string | undefined }, io: CommandIo): RegistryPaths {
  return registryPaths(io.cwd, values['registry-dir'], io.env.DELEGATE_JOB_LOGS_DIR || undefined);
}

export function tlsFiles(values: Record<string, unknown>): { caFile?: string; certFile?: string; keyFile?: string } {
  const pick = (key: string): string | undefined => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
  return Object.fromEntries(
    Object.entries({ caFile: pick('broker-ca'), certFile: pick('broker-cert'), keyFile: pick('broker-key') }).filter(([, v]) => v),
  );
}

export function explicitBroker(values: Record<string, unknown>): BrokerConfig | undefined {
  return typeof values.broker === 'string' ? brokerFromUrl(values.broker, tlsFiles(values)) : undefined;
}

export function seconds(raw: string | undefined, flag: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${flag} '${raw}' must be a number of seconds > 0`);
  return value;
}

export function requireJob(raw: string | undefined, sub: string): string {
  if (!raw) throw new UsageError(`${sub} needs --job ID`);
  try {
    return assertJobId(raw, '--job');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function diagnosticLine(d: WatchDiagnostic): string {
  switch (d.kind) {
    case 'dropped':
      return `dropped ${d.reason}${d.seq !== undefined ? ` seq=${d.seq}` : ''}: ${d.message}`;
    case 'duplicate':
      return `duplicate seq=${d.seq} (${d.event}) ignored`;
    case 'out-of-order':
      return `out-of-order seq=${d.seq} after seq=${d.highest}`;
    case 'offline':
      return 'broker connection lost; reconnecting';
    case 'reconnected':
      return `reconnected (session ${d.sessionPresent ? 'kept' : 'lost: checking the registry'})`;
  }
}
