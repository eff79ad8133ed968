import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { concurrencyFlag, parseOrReport } from '../flags.ts';
import { parsePools, workerSetup, writableRemoteCache } from './worker-setup.ts';
import { reportLockRefusal, stateWarn } from '../state-report.ts';
import { newRunId } from '../../engine/events/bus.ts';
import { WORKER_NAME, type Job } from '../../engine/dispatch/messages.ts';
import type { RunEvent } from '../../engine/types/events.ts';
import type { WorkerEvent } from '../../workflows/workers/worker.ts';
import { redactSecrets } from '../../security/known-secrets.ts';
import { redactUrl } from '../../workflows/mqtt/broker-config.ts';

const USAGE = `Usage: refinery worker --broker URL --remote-cache URL [options]

Runs stages for \`refinery run --workers\` on other machines: takes jobs from the project's
MQTT 5 shared subscription, runs each in this checkout exactly as a local run would, and stores
the result in the remote cache. Run it in a clone of the project, at the coordinator's commit.

Options:
  --broker URL         the MQTT 5 broker (mqtt:// or mqtts://); also MQTT_BROKER.
                       MQTT_USERNAME, MQTT_PASSWORD and MQTT_CA_CERTS give credentials and TLS
  --remote-cache URL   the Bazel HTTP cache the coordinator uses (bazel-remote, nginx WebDAV);
                       also REFINERY_REMOTE_CACHE or remote_cache.url in refinery.config.yaml
  -j, --concurrency N  stages at once (default: number of cores)
  --pools NAME=N       at most N stages of pool NAME at once (repeatable, or llm=4,io=2)
  --name NAME          this worker's name in the coordinator's output (default: host and clone)
  -v, --verbose        also print the stages' log lines

REFINERY_WORKER_KEY (the same secret on the coordinator and every worker) signs every message.
SIGTERM or Ctrl-C: take no more jobs, hand back those not started, finish those running; a
second one interrupts them (their jobs go back to the coordinator).`;

interface WorkerFlags {
  broker?: string;
  'remote-cache'?: string;
  concurrency?: string;
  pools: string[];
  name?: string;
  verbose: boolean;
}

function parse(argv: string[]): WorkerFlags {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      broker: { type: 'string' },
      'remote-cache': { type: 'string' },
      concurrency: { type: 'string', short: 'j' },
      pools: { type: 'string', multiple: true, default: [] },
      name: { type: 'string' },
      verbose: { type: 'boolean', short: 'v', default: false },
    },
  });
  if (positionals.length > 0) throw new Error(`unexpected argument '${positionals[0]}'`);
  return values as WorkerFlags;
}

function describe(job: Job): string {
  return `${job.instance} (run ${job.run})`;
}

function logLine(io: CommandIo, name: string, e: WorkerEvent): void {
  const say = (text: string): boolean => io.stdout.write(`worker ${name}: ${redactSecrets(text)}\n`);
  switch (e.kind) {
    case 'ready':
      say(`taking jobs from ${e.topic}`);
      return;
    case 'took':
      say(`took ${describe(e.job)}`);
      return;
    case 'finished': {
      const r = e.result;
      if (r.kind === 'done')
        say(`${r.how === 'cached' ? 'found in the remote cache' : 'ran'} ${describe(e.job)} in ${(e.ms / 1000).toFixed(2)} s`);
      else if (r.code === 'worker-refused') say(`refused ${describe(e.job)}: ${r.reason}`);
      else say(`${r.code === 'interrupted' ? 'interrupted' : 'failed'} ${describe(e.job)}: ${r.code}: ${r.reason}`);
      return;
    }
    case 'handed-back':
      say(`handed back ${describe(e.job)}`);
      return;
    case 'refused-message':
      say(`refused a message: ${e.reason}`);
      return;
    case 'stopping':
      say(`stopping: ${e.running} running (finishing them), ${e.queued} not started (handed back)`);
      return;
  }
}

function stageLine(io: CommandIo, name: string, e: RunEvent, verbose: boolean): void {
  if (e.type === 'stage-report' && e.report.kind === 'warning')
    io.stderr.write(`worker ${name}: ${e.stage}: warning: ${redactSecrets(e.report.message)}\n`);
  else if (verbose && e.type === 'stage-log') io.stdout.write(`worker ${name}: ${e.stage}: ${redactSecrets(e.message)}\n`);
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const flags = parseOrReport(io, 'worker', USAGE, () => parse(argv));
  if (!flags) return 2;
  const jobs = concurrencyFlag(flags.concurrency);
  const pools = parsePools(flags.pools);
  const name =
    flags.name ??
    (await import('../../workflows/workers/mqtt-transport.ts')).defaultWorkerName(createHash('sha256').update(io.cwd).digest('hex'));
  const problem =
    'error' in jobs
      ? jobs.error
      : 'error' in pools
        ? pools.error
        : WORKER_NAME.test(name)
          ? undefined
          : `--name ${name}: use letters, digits, '.', '_' or '-'`;
  if (problem || 'error' in jobs || 'error' in pools) {
    io.stderr.write(`refinery worker: ${problem}\n`);
    return 2;
  }
  const slots = jobs.value;
  const poolSizes: Record<string, number> = pools;
  const setup = workerSetup(io, 'worker', flags.broker);
  if (!setup) return 2;
  const settings = writableRemoteCache(io, 'worker', flags['remote-cache'], 'a worker stores every result there');
  if (!settings) return 2;
  const [
    { acquireProjectLock },
    { prepareStateFolders },
    { RemoteCache },
    { remoteResponses, registerRemoteResponses },
    { refineryVersion },
  ] = await Promise.all([
    import('../../engine/state/project-lock.ts'),
    import('../../engine/state/state-folders.ts'),
    import('../../engine/remote-cache/remote-cache.ts'),
    import('../../workflows/backends/remote-responses.ts'),
    import('../../engine/state/noop-recording.ts'),
  ]);
  const warn = stateWarn(io);
  // The checkout is the worker's: no local run may change it under a job.
  const lock = acquireProjectLock(io.cwd, warn);
  if (!lock.ok) {
    reportLockRefusal(io, lock);
    return 1;
  }
  try {
    prepareStateFolders(io.cwd, warn);
    const [{ JobRunner }, { Worker }, { openTransport }, { projectResolver }] = await Promise.all([
      import('../../engine/dispatch/worker-jobs.ts'),
      import('../../workflows/workers/worker.ts'),
      import('../../workflows/workers/mqtt-transport.ts'),
      import('../../engine/pipeline/resolve-names.ts'),
    ]);
    const sessionId = newRunId();
    const cache = new RemoteCache(settings, refineryVersion());
    const unregister = registerRemoteResponses(sessionId, remoteResponses(cache));
    const runner = new JobRunner({
      root: io.cwd,
      sessionId,
      remote: cache,
      resolver: projectResolver(io.cwd),
      warn,
      signal: io.forceSignal,
      onEvent: (e) => stageLine(io, name, e, flags.verbose),
    });
    let transport;
    try {
      transport = await openTransport({
        broker: setup.broker,
        clientId: `refinery-worker-${setup.project}-${name}`.slice(0, 120),
        // Long enough to ride out a broker restart; short enough that a worker gone for good stops
        // being handed its share of the jobs soon (the coordinator sends an untaken job again meanwhile).
        sessionExpirySec: 60,
        signal: io.signal,
      });
    } catch (error) {
      io.stderr.write(`refinery worker: ${redactSecrets((error as Error).message)}\n`);
      return 1;
    }
    const worker = new Worker({
      name,
      project: setup.project,
      key: setup.key,
      transport,
      jobs: runner,
      concurrency: slots,
      pools: poolSizes,
      windowMs: 300_000,
      onEvent: (e) => logLine(io, name, e),
    });
    io.stdout.write(
      `worker ${name}: project ${setup.project}, broker ${redactUrl(setup.broker.url)}, remote cache ${settings.baseUrl}, ${slots} at once\n`,
    );
    await worker.start();
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await worker.stop();
    runner.close();
    await cache.flush();
    unregister();
    cache.close();
    await transport.close(true);
    io.stdout.write(`worker ${name}: stopped\n`);
    return 0;
  } finally {
    lock.release();
  }
}

export const workerCommand: Command = {
  name: 'worker',
  summary: 'Run stages for `refinery run --workers` on this machine (MQTT 5 + remote cache)',
  usage: USAGE,
  run,
};
