// `refinery jobs wait`: block until a job (or every pending or running one) ends.
import { parseArgs } from 'node:util';
import type { CommandIo } from '../command.ts';
import { brokerForJob } from '../../workflows/jobs/broker-resolve.ts';
import { AuditLog } from '../../workflows/jobs/audit-log.ts';
import { formatEventLine } from '../../workflows/jobs/event-payload.ts';
import { JobWatch, type WatchOutcome } from '../../workflows/jobs/job-watch.ts';
import { isTerminalStatus } from '../../workflows/jobs/record-codec.ts';
import { JobRegistry } from '../../workflows/jobs/registry.ts';
import { OUTCOME_EXIT_CODES, type JobOutcomeKind, type JobRecord } from '../../workflows/jobs/types.ts';
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
  const records = await Promise.all(ids.map((id) => registry.get(id)));
  // A job that already ended needs no broker: its outcome is on disk (the broker that carried its
  // events may well be gone, e.g. the embedded one of a finished submit).
  const live = records.filter((record) => !isTerminalStatus(record.status));
  const watches = await Promise.all(
    live.map(async (record) => {
      const id = record.job_id;
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
  if (watches.length > 0)
    io.stderr.write(`subscribed; waiting for ${live.length === 1 ? `job ${live[0]?.job_id}` : `${live.length} jobs`}\n`);
  const liveOutcomes = await Promise.all(watches.map((w) => w.result));
  await Promise.all(watches.map((w) => w.close()));
  const outcomes: WatchOutcome[] = [];
  for (const record of records) {
    const id = record.job_id;
    const index = live.indexOf(record);
    const outcome = index >= 0 ? (liveOutcomes[index] as WatchOutcome) : await recordedOutcome(audit, record);
    outcomes.push(outcome);
    io.stdout.write(`job=${id} outcome=${outcome.kind} (${outcome.reason})\n`);
    if (index >= 0 && outcome.kind !== 'timeout') await noteTerminal(registry, audit, id, outcome);
  }
  return worstExit(outcomes);
}

async function noteTerminal(registry: JobRegistry, audit: AuditLog, id: string, outcome: WatchOutcome): Promise<void> {
  const record = await registry.setStatus(id, outcome.kind === 'completed' ? 'completed' : 'error', { onlyIfNotTerminal: true });
  const previous = await audit.readStatus(id);
  if (previous?.outcome) return;
  await audit.writeStatus({
    job_id: id,
    status: record.status,
    updated_at: record.updated_at,
    outcome: outcome.kind,
    reason: outcome.reason,
  });
}

/**
 * The outcome a finished job left: its audit status when refinery wrote one (a failed validation
 * counts as error, as submit's exit code), else its record's status.
 */
async function recordedOutcome(audit: AuditLog, record: JobRecord): Promise<WatchOutcome> {
  const status = await audit.readStatus(record.job_id);
  const recorded = (kind: JobOutcomeKind, reason: string): WatchOutcome => ({
    kind,
    via: 'registry',
    reason: `recorded: ${reason}`,
    events: [],
  });
  if (status?.validation === 'fail') return recorded('error', 'validation failed');
  if (status?.outcome && Object.hasOwn(OUTCOME_EXIT_CODES, status.outcome)) return recorded(status.outcome, status.reason || record.status);
  return recorded(record.status === 'completed' ? 'completed' : 'error', `the registry record says '${record.status}'`);
}

function worstExit(outcomes: WatchOutcome[]): number {
  if (outcomes.some((o) => o.kind === 'timeout')) return OUTCOME_EXIT_CODES.timeout;
  if (outcomes.some((o) => o.kind === 'error')) return OUTCOME_EXIT_CODES.error;
  return OUTCOME_EXIT_CODES.completed;
}
