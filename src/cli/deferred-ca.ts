/**
 * NODE_EXTRA_CA_CERTS makes Node 20 read and parse that file as every process starts, before
 * any script runs (a system bundle: ~30 ms of `node -e 0`'s ~65 here), whether or not the
 * process ever opens a TLS connection. A `refinery run` of a pipeline of `run:` stages without
 * a remote cache opens none: its commands are other programs. Where the last such run left
 * `.refinery/state/lean-start` (lean-start.ts), the quick client (bin/quick-client.pl) starts
 * Node with the variable moved to this one; Node puts it back at once, before it starts
 * anything, so every command, runner and task sees the variable as the user set it. Should
 * the run turn out to need the certificates after all (the pipeline gained a task stage, a
 * remote cache was configured), it starts again with them before it has done anything.
 */
export const DEFERRED_CA_VARIABLE = 'REFINERY_DEFERRED_CA_CERTS';

/**
 * Puts NODE_EXTRA_CA_CERTS back into `env` (this process's, which its children inherit);
 * true when this process itself started without the certificates it names.
 */
export function restoreDeferredCa(env: NodeJS.ProcessEnv): boolean {
  const deferred = env[DEFERRED_CA_VARIABLE];
  if (deferred === undefined) return false;
  delete env[DEFERRED_CA_VARIABLE];
  // Set again by the time Node started: Node read that one, and it stands.
  if (env.NODE_EXTRA_CA_CERTS !== undefined || deferred === '') return false;
  env.NODE_EXTRA_CA_CERTS = deferred;
  return true;
}
