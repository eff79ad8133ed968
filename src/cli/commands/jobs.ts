import { parseArgs } from 'node:util';
import path from 'node:path';
import type { Command, CommandIo } from '../command.ts';
import { AuditLog } from '../../workflows/jobs/audit-log.ts';
import { MAX_DETAIL_CHARS, MAX_PAYLOAD_BYTES } from '../../workflows/jobs/event-payload.ts';
import { formatJobTable, formatTimeline } from '../../workflows/jobs/format.ts';
import { EventTooLargeError, publishJobEvent } from '../../workflows/jobs/publisher.ts';
import { redactRecord } from '../../workflows/jobs/record-codec.ts';
import { JobRegistry } from '../../workflows/jobs/registry.ts';
import { JOB_EVENTS, type JobEventName } from '../../workflows/jobs/types.ts';
import { runValidation } from '../../workflows/jobs/validate-hook.ts';
import { COMMON, UsageError, explicitBroker, pathsOf, requireJob } from './jobs-options.ts';
import { submit } from './jobs-submit.ts';
import { wait } from './jobs-wait.ts';

const USAGE = `Usage: refinery jobs <subcommand> [options]

Hand a job to an agent over MQTT (wire-compatible with the multi-agent-mux delegate-job skill).

  submit --prompt TEXT [--agent NAME] [--agent-kind command|tmux|human] [--agent-session tmux:NAME]
         [--timeout SEC] [--idle-timeout SEC] [--validate SCRIPT] [--workdir DIR] [--expect FILE]...
         [--type direct|loop|discuss] [--reviewer NAME] [--reviewer-kind KIND]
         [--reviewer-session tmux:NAME] [--reviewer-cmd JSON-ARGV] [--max-iterations N]
         [--compat] [--dry-run] [--job ID] [--publish-cmd JSON-ARGV] [-- AGENT COMMAND ARGS...]
         (--publish-cmd: what the agent runs to publish, without --job; default
          node <refinery>/bin/refinery.js -C ROOT jobs publish --registry-dir DIR)
  status --job ID [--json]          one job record (secrets redacted) and its audit status
  list [--json]                     every job in the registry
  wait [--job ID] [--timeout SEC] [--idle-timeout SEC]
                                    block until the job (or every pending/running job) ends
  verify --job ID --validate SCRIPT run a validation script (env JOB_ID, REGISTRY_DIR); exit 0 passes
  logs ID | --list [--json]         a job's event timeline from its audit log
  publish --job ID --event EVENT [--detail TEXT] [--data JSON]
                                    publish one event (${JOB_EVENTS.join('|')})

Common options:
  --registry-dir DIR   job registry (default .mam/jobs); audit logs go to ../delegate_job_logs
                       (or $DELEGATE_JOB_LOGS_DIR)
  --broker URL         mqtt://, mqtts://, ws://, wss:// (else MQTT_BROKER/MQTT_PORT/MQTT_TLS/...;
                       else submit starts an embedded broker on 127.0.0.1 for its own duration)
  --broker-ca FILE --broker-cert FILE --broker-key FILE   TLS files (or MQTT_CA_CERTS, ...)

Security:
  A job's token stays in its record (.mam/jobs/<id>.json, mode 0600) and never goes over MQTT: the
  publish command signs each event with it (data.hmac_sig, HMAC-SHA256), and the subscriber drops
  events that are unsigned or signed with another key, so a client that reads the events cannot
  forge them. Events over ${MAX_PAYLOAD_BYTES / 1024} KiB, or with a --detail over ${MAX_DETAIL_CHARS} characters,
  are dropped and logged.
  On the embedded broker only the job's own clients may subscribe to its topic or publish on it.
  On an external broker (--broker, MQTT_BROKER) other clients can read a job's events (not its
  token) unless the broker's ACLs and TLS keep them out.
  --compat (the seed's tokenless protocol): events are not signed and not checked and the topic is
  not guarded, so anyone who can reach the broker can read the job's events and end it with a
  forged completed or error (a forged completed also runs --validate). Only the job_id, schema and
  size checks still hold. Use it only on a broker whose every client you trust.

Exit codes: 0 completed, 1 error (or validation failed), 2 timeout (publish: publish failure),
64 bad usage (publish: an event over the size limits), 3 other failures (unknown job, broker
unreachable, registry lock).`;

type Handler = (argv: string[], io: CommandIo) => Promise<number>;

const SUBCOMMANDS: Record<string, Handler> = { submit, status, list, wait, verify, logs, publish };

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'Delegate jobs to agents over MQTT: submit, status, list, wait, verify, logs, publish',
  usage: USAGE,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    const handler = sub === undefined ? undefined : SUBCOMMANDS[sub];
    if (!handler) {
      io.stderr.write(`refinery jobs: ${sub === undefined ? 'missing subcommand' : `unknown subcommand '${sub}'`}\n\n${USAGE}\n`);
      return 64;
    }
    try {
      return await handler(rest, io);
    } catch (error) {
      const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      io.stderr.write(`refinery jobs ${sub}: ${(error as Error).message}\n`);
      return usage ? 64 : 3;
    }
  },
};

async function status(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...COMMON, job: { type: 'string' } } });
  const id = requireJob(values.job, 'status');
  const paths = pathsOf(values, io);
  const registry = new JobRegistry(paths);
  const record = redactRecord(await registry.get(id));
  const extras = await registry.getExtras(id);
  const audit = await new AuditLog(paths).readStatus(id);
  if (values.json) {
    io.stdout.write(`${JSON.stringify({ record, refinery: extras, audit: audit ?? null }, null, 2)}\n`);
    return 0;
  }
  io.stdout.write(`${JSON.stringify(record, null, 2)}\n`);
  io.stdout.write(`type=${extras.job_type} iteration=${extras.iteration}/${extras.max_iterations} compat=${record.auth_token === null}\n`);
  if (audit?.outcome)
    io.stdout.write(
      `outcome=${audit.outcome}${audit.reason ? ` (${audit.reason})` : ''}${audit.validation ? ` validation=${audit.validation}` : ''}\n`,
    );
  return 0;
}

async function list(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...COMMON } });
  const paths = pathsOf(values, io);
  const registry = new JobRegistry(paths);
  const audit = new AuditLog(paths);
  const { records, problems } = await registry.list();
  const rows = await Promise.all(
    records.map(async (record) => {
      const status = await audit.readStatus(record.job_id);
      return { record: redactRecord(record), extras: await registry.getExtras(record.job_id), ...(status ? { status } : {}) };
    }),
  );
  for (const problem of problems) io.stderr.write(`skipped: ${problem}\n`);
  if (values.json) io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else io.stdout.write(rows.length === 0 ? `no jobs in ${paths.registryDir}\n` : `${formatJobTable(rows)}\n`);
  return 0;
}

async function verify(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...COMMON, job: { type: 'string' }, validate: { type: 'string' }, workdir: { type: 'string' } },
  });
  const id = requireJob(values.job, 'verify');
  if (!values.validate) throw new UsageError('verify needs --validate SCRIPT');
  const paths = pathsOf(values, io);
  const registry = new JobRegistry(paths);
  await registry.get(id);
  const audit = new AuditLog(paths);
  io.stdout.write(`verifying job ${id} with ${values.validate}\n`);
  const result = await runValidation({
    script: values.validate,
    jobId: id,
    registryDir: paths.registryDir,
    workdir: path.resolve(io.cwd, values.workdir ?? '.'),
    outputFile: path.join(audit.dir(id), 'validate.log'),
    signal: io.signal,
  });
  await audit.local(id, 'validation', result.passed ? 'pass (verify)' : `fail (verify, exit ${result.exitCode})`);
  io.stdout.write(result.passed ? 'verify: PASS (exit 0)\n' : `verify: FAIL (exit ${result.exitCode}); output in ${result.outputFile}\n`);
  return result.passed ? 0 : (result.exitCode ?? 1) || 1;
}

async function logs(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { ...COMMON, list: { type: 'boolean' } } });
  const paths = pathsOf(values, io);
  const audit = new AuditLog(paths);
  if (values.list) {
    const ids = await audit.jobIds();
    if (values.json) io.stdout.write(`${JSON.stringify(ids)}\n`);
    else
      io.stdout.write(
        ids.length === 0 ? `no audit logs in ${paths.logsRoot}\n` : `${ids.map((id) => path.join(paths.logsRoot, id)).join('\n')}\n`,
      );
    return 0;
  }
  const id = requireJob(positionals[0], 'logs');
  const { lines, problems } = await audit.timeline(id);
  for (const problem of problems) io.stderr.write(`${problem}\n`);
  if (lines.length === 0) return 3;
  io.stdout.write(values.json ? `${JSON.stringify(lines, null, 2)}\n` : `${formatTimeline(lines)}\n`);
  return 0;
}

async function publish(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { ...COMMON, job: { type: 'string' }, event: { type: 'string' }, detail: { type: 'string' }, data: { type: 'string' } },
  });
  const id = requireJob(values.job, 'publish');
  const event = values.event as JobEventName;
  if (!(JOB_EVENTS as readonly string[]).includes(event))
    throw new UsageError(`--event '${values.event ?? ''}' must be one of ${JOB_EVENTS.join(', ')}`);
  let data: Record<string, unknown> | undefined;
  if (values.data !== undefined) {
    try {
      data = JSON.parse(values.data) as Record<string, unknown>;
    } catch {
      throw new UsageError(`--data must be a JSON object, e.g. '{"files":3}'`);
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new UsageError(`--data must be a JSON object`);
  }
  const registry = new JobRegistry(pathsOf(values, io));
  await registry.get(id);
  const override = explicitBroker(values);
  try {
    const payload = await publishJobEvent({
      registry,
      jobId: id,
      event,
      ...(values.detail !== undefined ? { detail: values.detail } : {}),
      ...(data ? { data } : {}),
      env: io.env,
      ...(override ? { broker: override } : {}),
      signal: io.signal,
    });
    io.stdout.write(`published job=${id} seq=${payload.seq} event=${event}\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`refinery jobs publish: ${(error as Error).message}\n`);
    return error instanceof EventTooLargeError ? 64 : 2;
  }
}
