// `refinery jobs wait`: block until a job (or every pending or running one) ends.
import { parseArgs } from 'node:util';
import type { CommandIo } from '../command.ts';
import { brokerForJob } from '../../jobs/broker-resolve.ts';
import { AuditLog } from '../../jobs/audit-log.ts';
import { formatEventLine } from '../../jobs/event-payload.ts';
import { JobWatch, type WatchOutcome } from '../../jobs/job-watch.ts';
import { isTerminalStatus } from '../../jobs/record-codec.ts';
import { JobRegistry } from '../../jobs/registry.ts';
import { OUTCOME_EXIT_CODES } from '../../jobs/types.ts';
import { COMMON, diagnosticLine, explicitBroker, pathsOf, requireJob, seconds } from './jobs-options.ts';

export async function wait(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...COMMON, job: { type: 'string' }, timeout: { type: 'string' }, 'idle-timeout': { type: 'string' } },
  });
  const paths = pathsOf(values, io);
  const registry = new JobRegistry(paths);
  const audit = new AuditLog(paths);
  const ids =
    values.job !== undefined
      ? [requireJob(values.job, 'wait')]
      : (await registry.list()).records.filter((r) => !isTerminalStatus(r.status)).map((r) => r.job_id);
  if (ids.length === 0) {
    io.stderr.write(`no pending or running jobs in ${paths.registryDir}\n`);
    return 0;
  }
  const started = Date.now();
  const override = explicitBroker(values);
  const watches = await Promise.all(
    ids.map(async (id) => {
      const record = await registry.get(id);
      const extras = await registry.getExtras(id);
      const totalSec = seconds(values.timeout, '--timeout', record.timeout_sec);
      return JobWatch.start({
        registry,
        audit,
        jobId: id,
        broker: brokerForJob(record, extras, io.env, override),
        env: io.env,
        timeoutMs: Math.max(1, totalSec * 1000 - (Date.now() - started)),
        idleTimeoutMs: seconds(values['idle-timeout'], '--idle-timeout', record.idle_timeout_sec) * 1000,
        afterSeq: 0,
        signal: io.signal,
        onEvent: (payload) => io.stdout.write(`${formatEventLine(payload)}\n`),
        onDiagnostic: (d) => io.stderr.write(`job=${id} ${diagnosticLine(d)}\n`),
      });
    }),
  );
  io.stderr.write(`subscribed; waiting for ${ids.length === 1 ? `job ${ids[0]}` : `${ids.length} jobs`}\n`);
  const outcomes = await Promise.all(watches.map((w) => w.result));
  await Promise.all(watches.map((w) => w.close()));
  for (const [index, outcome] of outcomes.entries()) {
    const id = ids[index] as string;
    io.stdout.write(`job=${id} outcome=${outcome.kind} (${outcome.reason})\n`);
    if (outcome.kind !== 'timeout') await noteTerminal(registry, audit, id, outcome);
  }
  return worstExit(outcomes);
}

async function noteTerminal(registry: JobRegistry, audit: AuditLog, id: string, outcome: WatchOutcome): Promise<void> {
  const record = await registry.setStatus(id, outcome.kind === 'completed' ? 'completed' : 'error', { onlyIfNotTerminal: true });
  const previous = await audit.readStatus(id);
  if (previous?.outcome) return;
  await audit.writeStatus({ job_id: id, status: record.status, updated_at: record.updated_at, outcome: outcome.kind, reason: outcome.reason });
}

function worstExit(outcomes: WatchOutcome[]): number {
  if (outcomes.some((o) => o.kind === 'timeout')) return OUTCOME_EXIT_CODES.timeout;
  if (outcomes.some((o) => o.kind === 'error')) return OUTCOME_EXIT_CODES.error;
  return OUTCOME_EXIT_CODES.completed;
}
