import { spawnSync } from 'node:child_process';
import { constants } from 'node:os';

// Loaded only by a run that started without the certificates and needs them (deferred-ca.ts):
// no other start of refinery loads node:child_process for it.

/**
 * Runs this same command again in a Node that reads the certificates, waiting for it, with
 * the terminal and the environment as they are; its exit code (128+N for a signal N, as a
 * shell says it), or why it could not start. Nothing has been written or locked yet by the
 * time a run asks for this.
 */
export function rerunWithCertificates(env: NodeJS.ProcessEnv): number | Error {
  const [node, bin, ...args] = process.argv;
  const result = spawnSync(node as string, [...process.execArgv, bin as string, ...args], { stdio: 'inherit', env });
  if (result.error) return result.error;
  if (result.signal) return 128 + (constants.signals[result.signal] ?? 0);
  return result.status ?? 1;
}
