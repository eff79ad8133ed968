import { parseArgs } from 'node:util';
import path from 'node:path';
import type { Command, CommandIo } from '../command.ts';
import { acquireBroker, brokerForJob } from '../../jobs/broker-resolve.ts';
import { brokerFromUrl, redactUrl, type BrokerConfig } from '../../mqtt/broker-config.ts';
import { AuditLog } from '../../jobs/audit-log.ts';
import { delegateJob, type AgentSpec } from '../../jobs/delegate.ts';
import { makeAgent, resolveAgentKind } from '../../jobs/agents/agent-factory.ts';
import { formatEventLine } from '../../jobs/event-payload.ts';
import { formatJobTable, formatTimeline } from '../../jobs/format.ts';
import { buildInstructions } from '../../jobs/instructions.ts';
import { assertJobId, newJobId } from '../../jobs/job-id.ts';
import { JobWatch, type WatchDiagnostic, type WatchOutcome } from '../../jobs/job-watch.ts';
import { registryPaths, type RegistryPaths } from '../../jobs/paths.ts';
import { publishJobEvent } from '../../jobs/publisher.ts';
import { publisherArgv } from '../../jobs/publisher-command.ts';
import { isTerminalStatus, redactRecord } from '../../jobs/record-codec.ts';
import { JobRegistry } from '../../jobs/registry.ts';
import { JOB_EVENTS, OUTCOME_EXIT_CODES, type AgentKind, type JobEventName, type JobType } from '../../jobs/types.ts';
import { runValidation } from '../../jobs/validate-hook.ts';

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

Exit codes: 0 completed, 1 error (or validation failed), 2 timeout (publish: publish failure),
64 bad usage, 3 other failures (unknown job, broker unreachable, registry lock).`;

class UsageError extends Error {}

const COMMON = {
  'registry-dir': { type: 'string' },
  broker: { type: 'string' },
  'broker-ca': { type: 'string' },
  'broker-cert': { type: 'string' },
  'broker-key': { type: 'string' },
  json: { type: 'boolean' },
} as const;

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

function pathsOf(values: { 'registry-dir'?: string | undefined }, io: CommandIo): RegistryPaths {
  return registryPaths(io.cwd, values['registry-dir'], io.env.DELEGATE_JOB_LOGS_DIR || undefined);
}

function tlsFiles(values: Record<string, unknown>): { caFile?: string; certFile?: string; keyFile?: string } {
  const pick = (key: string): string | undefined => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
  return Object.fromEntries(
    Object.entries({ caFile: pick('broker-ca'), certFile: pick('broker-cert'), keyFile: pick('broker-key') }).filter(([, v]) => v),
  );
}

function explicitBroker(values: Record<string, unknown>): BrokerConfig | undefined {
  return typeof values.broker === 'string' ? brokerFromUrl(values.broker, tlsFiles(values)) : undefined;
}

function seconds(raw: string | undefined, flag: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${flag} '${raw}' must be a number of seconds > 0`);
  return value;
}

function requireJob(raw: string | undefined, sub: string): string {
  if (!raw) throw new UsageError(`${sub} needs --job ID`);
  try {
    return assertJobId(raw, '--job');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function diagnosticLine(d: WatchDiagnostic): string {
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

async function submit(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...COMMON,
      prompt: { type: 'string' },
      agent: { type: 'string', default: 'claude-code' },
      'agent-kind': { type: 'string' },
      'agent-session': { type: 'string', default: 'tmux:claude' },
      'agent-cmd': { type: 'string' },
      'tmux-server': { type: 'string' },
      timeout: { type: 'string' },
      'idle-timeout': { type: 'string' },
      validate: { type: 'string' },
      workdir: { type: 'string' },
      expect: { type: 'string', multiple: true },
      type: { type: 'string', default: 'direct' },
      reviewer: { type: 'string', default: 'hermes' },
      'reviewer-kind': { type: 'string' },
      'reviewer-session': { type: 'string', default: 'tmux:hermes' },
      'reviewer-cmd': { type: 'string' },
      'max-iterations': { type: 'string', default: '5' },
      'exit-grace': { type: 'string' },
      compat: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      job: { type: 'string' },
      'publish-cmd': { type: 'string' },
    },
  });
  if (!values.prompt) throw new UsageError('submit needs --prompt TEXT');
  const type = values.type as JobType;
  if (!['direct', 'loop', 'discuss'].includes(type)) throw new UsageError(`--type '${values.type}' must be direct, loop or discuss`);
  const maxIterations = Number(values['max-iterations']);
  if (!Number.isInteger(maxIterations) || maxIterations < 1) throw new UsageError(`--max-iterations '${values['max-iterations']}' must be an integer >= 1`);
  const timeoutSec = seconds(values.timeout, '--timeout', 3600);
  const idleTimeoutSec = seconds(values['idle-timeout'], '--idle-timeout', 120);
  const paths = pathsOf(values, io);
  const workdir = path.resolve(io.cwd, values.workdir ?? '.');
  const jobId = values.job !== undefined ? requireJob(values.job, 'submit') : undefined;
  const show = (text: string): void => {
    io.stdout.write(`[human agent] do the task below, then publish the events it names:\n----\n${text}----\n`);
  };
  const workerChoice = {
    name: values.agent,
    kind: agentKindOf(values['agent-kind'], '--agent-kind'),
    session: values['agent-session'],
    command: positionals.length > 0 ? positionals : jsonArgv(values['agent-cmd'], '--agent-cmd'),
    ...(values['tmux-server'] ? { tmuxServer: values['tmux-server'] } : {}),
    show,
  };
  const reviewerChoice = {
    name: values.reviewer,
    kind: agentKindOf(values['reviewer-kind'], '--reviewer-kind'),
    session: values['reviewer-session'],
    command: jsonArgv(values['reviewer-cmd'], '--reviewer-cmd'),
    ...(values['tmux-server'] ? { tmuxServer: values['tmux-server'] } : {}),
    show,
  };
  const argvForPublish = jsonArgv(values['publish-cmd'], '--publish-cmd') ?? publisherArgv(io.cwd, paths.registryDir);
  const expected = values.expect ?? [];
  if (values['dry-run']) {
    const id = jobId ?? newJobId();
    io.stdout.write(`[dry-run] nothing registered; job ${id} (${type}) would go to ${resolveAgentKind(workerChoice)} agent '${workerChoice.name}'\n`);
    if (type !== 'direct') io.stdout.write(`[dry-run] reviewer: ${resolveAgentKind(reviewerChoice)} agent '${reviewerChoice.name}', up to ${maxIterations} iterations\n`);
    io.stdout.write(
      `----\n${buildInstructions({ jobId: id, publisherArgv: argvForPublish, prompt: values.prompt, idleTimeoutSec, expectedArtifacts: expected, role: 'worker', type })}----\n`,
    );
    io.stdout.write(`${path.join(paths.logsRoot, id)}\n`);
    return 0;
  }
  const worker: AgentSpec = { name: workerChoice.name, session: workerChoice.session, agent: makeAgent(workerChoice) };
  const reviewer: AgentSpec | undefined =
    type === 'direct' ? undefined : { name: reviewerChoice.name, session: reviewerChoice.session, agent: makeAgent(reviewerChoice) };
  const broker = await acquireBroker({ ...(values.broker ? { url: values.broker } : {}), ...tlsFiles(values), env: io.env });
  io.stderr.write(`broker: ${redactUrl(broker.config.url)}${broker.origin === 'embedded' ? ' (embedded, for this command only)' : ''}\n`);
  try {
    const result = await delegateJob({
      paths,
      broker: broker.config,
      env: io.env,
      prompt: values.prompt,
      worker,
      ...(reviewer ? { reviewer } : {}),
      type,
      maxIterations,
      timeoutSec,
      idleTimeoutSec,
      expectedArtifacts: expected,
      ...(values.validate ? { validate: values.validate } : {}),
      workdir,
      compat: values.compat === true,
      publisherArgv: argvForPublish,
      agentEnv: credentialEnv(broker.config),
      ...(values['exit-grace'] ? { exitGraceMs: seconds(values['exit-grace'], '--exit-grace', 3) * 1000 } : {}),
      ...(jobId ? { jobId } : {}),
      signal: io.signal,
      hooks: {
        registered: (record) => io.stdout.write(`registered job: ${record.job_id}\n`),
        phase: (p) => io.stdout.write(`[${p.role} ${p.iteration}] ${p.agent}\n`),
        event: (payload) => io.stdout.write(`${formatEventLine(payload)}\n`),
        diagnostic: (d) => io.stderr.write(`${diagnosticLine(d)}\n`),
        note: (message) => io.stderr.write(`${message}\n`),
      },
    });
    io.stdout.write(`outcome: ${result.outcome} (${result.reason})${result.iterations > 1 ? ` after ${result.iterations} iterations` : ''}\n`);
    if (result.validation) io.stdout.write(`validation: ${result.validation.passed ? 'PASS' : `FAIL (exit ${result.validation.exitCode})`}\n`);
    io.stdout.write(`${result.logDir}\n`);
    return result.exitCode;
  } finally {
    await broker.release();
  }
}

function agentKindOf(raw: string | undefined, flag: string): AgentKind | undefined {
  if (raw === undefined) return undefined;
  if (!['command', 'tmux', 'human'].includes(raw)) throw new UsageError(`${flag} '${raw}' must be command, tmux or human`);
  return raw as AgentKind;
}

function jsonArgv(raw: string | undefined, flag: string): string[] | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new UsageError(`${flag} must be a JSON array of strings, e.g. '["codex","exec","-"]'`);
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
    throw new UsageError(`${flag} must be a non-empty JSON array of strings, e.g. '["codex","exec","-"]'`);
  }
  return value as string[];
}

/** Broker credentials for agent processes, so the publish command in their instructions can connect. */
function credentialEnv(config: BrokerConfig): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  if (config.username !== undefined) env.MQTT_USERNAME = config.username;
  if (config.password !== undefined) env.MQTT_PASSWORD = config.password;
  if (config.caFile !== undefined) env.MQTT_CA_CERTS = config.caFile;
  if (config.certFile !== undefined) env.MQTT_CERTFILE = config.certFile;
  if (config.keyFile !== undefined) env.MQTT_KEYFILE = config.keyFile;
  return env;
}

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
  if (audit?.outcome) io.stdout.write(`outcome=${audit.outcome}${audit.reason ? ` (${audit.reason})` : ''}${audit.validation ? ` validation=${audit.validation}` : ''}\n`);
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

async function wait(argv: string[], io: CommandIo): Promise<number> {
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

async function verify(argv: string[], io: CommandIo): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { ...COMMON, job: { type: 'string' }, validate: { type: 'string' }, workdir: { type: 'string' } } });
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
    else io.stdout.write(ids.length === 0 ? `no audit logs in ${paths.logsRoot}\n` : `${ids.map((id) => path.join(paths.logsRoot, id)).join('\n')}\n`);
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
  if (!(JOB_EVENTS as readonly string[]).includes(event)) throw new UsageError(`--event '${values.event ?? ''}' must be one of ${JOB_EVENTS.join(', ')}`);
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
    return 2;
  }
}
