// `refinery run --workers URL`: the checks made before the run starts, and the remote slots the
// executor hands stages to. The engine's Coordinator does the dispatching; this connects it.
import type { CommandIo } from '../command.ts';
import type { StageCache } from '../../engine/remote-cache/stage-cache.ts';
import type { RemoteSlots } from '../../engine/executor/remote-slots.ts';
import { pipelineRef } from '../../engine/dispatch/stage-identity.ts';
import { redactSecrets } from '../../security/known-secrets.ts';
import { secondsFlag, workerSetup, type WorkerSetup } from './worker-setup.ts';

export interface WorkersFlags {
  workers?: string;
  concurrency?: string;
  lease?: string;
  'take-timeout'?: string;
}

export interface WorkersPlan {
  setup: WorkerSetup;
  leaseMs: number;
  takeMs: number;
  /** `-j N` with --workers: local slots filled first; none without it. */
  localSlots: number;
}

/** Checked before anything runs (the remote cache the session checks); undefined when something is missing (said on stderr, exit 2). */
export function checkWorkers(io: CommandIo, flags: WorkersFlags, concurrency: number): WorkersPlan | undefined {
  const lease = secondsFlag('lease', flags.lease, 15);
  const take = secondsFlag('take-timeout', flags['take-timeout'], 120);
  const problem = 'error' in lease ? lease.error : 'error' in take ? take.error : undefined;
  if (problem || 'error' in lease || 'error' in take) {
    io.stderr.write(`refinery run: ${problem}\n`);
    return undefined;
  }
  const setup = workerSetup(io, 'run', flags.workers);
  if (!setup) return undefined;
  return { setup, leaseMs: lease.ms, takeMs: take.ms, localSlots: flags.concurrency === undefined ? 0 : concurrency };
}

export interface OpenedWorkers {
  slots: RemoteSlots;
  close(): Promise<void>;
}

/** Connects to the broker and listens on the run's topic; undefined when that fails (said on stderr). */
export async function openWorkers(
  io: CommandIo,
  plan: WorkersPlan,
  run: { runId: string; pipelineFile: string; params: Record<string, string>; stages: StageCache; force: boolean },
): Promise<OpenedWorkers | undefined> {
  const pipeline = pipelineRef(io.cwd, run.pipelineFile);
  if (!pipeline) {
    io.stderr.write(
      `refinery run: --workers: ${run.pipelineFile} is outside the project, so no worker's checkout has it; move it into pipelines/\n`,
    );
    return undefined;
  }
  const [{ openTransport }, { Coordinator }] = await Promise.all([
    import('../../workflows/workers/mqtt-transport.ts'),
    import('../../engine/dispatch/coordinator.ts'),
  ]);
  let transport: Awaited<ReturnType<typeof openTransport>>;
  try {
    transport = await openTransport({
      broker: plan.setup.broker,
      clientId: `refinery-run-${plan.setup.project}-${run.runId}`.slice(0, 120),
      sessionExpirySec: 3600,
      signal: io.signal,
    });
  } catch (error) {
    io.stderr.write(`refinery run: ${redactSecrets((error as Error).message)}\n`);
    return undefined;
  }
  const warned = new Set<string>();
  const coordinator = new Coordinator({
    transport,
    key: plan.setup.key,
    project: plan.setup.project,
    runId: run.runId,
    root: io.cwd,
    pipeline,
    params: run.params,
    stages: run.stages,
    leaseMs: plan.leaseMs,
    takeMs: plan.takeMs,
    localSlots: plan.localSlots,
    force: run.force,
    windowMs: 300_000,
    warn: (message) => {
      if (warned.has(message)) return;
      warned.add(message);
      io.stderr.write(`refinery: warning: ${redactSecrets(message)}\n`);
    },
  });
  await coordinator.start();
  return {
    slots: coordinator,
    close: async () => {
      await coordinator.close();
      // The run is over: its session and its topic's messages are of no more use.
      await transport.close(true);
    },
  };
}
