// `refinery jobs submit`: start an agent on a job and follow it to its end.
import { parseArgs } from 'node:util';
import path from 'node:path';
import type { CommandIo } from '../command.ts';
import { acquireBroker } from '../../workflows/jobs/broker-resolve.ts';
import { redactUrl, type BrokerConfig } from '../../workflows/mqtt/broker-config.ts';
import { delegateJob, type AgentSpec } from '../../workflows/jobs/delegate.ts';
import { makeAgent, resolveAgentKind } from '../../workflows/jobs/agents/agent-factory.ts';
import { formatEventLine } from '../../workflows/jobs/event-payload.ts';
import { buildInstructions } from '../../workflows/jobs/instructions.ts';
import { newJobId } from '../../workflows/jobs/job-id.ts';
import { publisherArgv } from '../../workflows/jobs/publisher-command.ts';
import type { AgentKind, JobType } from '../../workflows/jobs/types.ts';
import { COMMON, UsageError, diagnosticLine, pathsOf, requireJob, seconds, tlsFiles } from './jobs-options.ts';

export async function submit(argv: string[], io: CommandIo): Promise<number> {
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
  if (!Number.isInteger(maxIterations) || maxIterations < 1)
    throw new UsageError(`--max-iterations '${values['max-iterations']}' must be an integer >= 1`);
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
    io.stdout.write(
      `[dry-run] nothing registered; job ${id} (${type}) would go to ${resolveAgentKind(workerChoice)} agent '${workerChoice.name}'\n`,
    );
    if (type !== 'direct')
      io.stdout.write(
        `[dry-run] reviewer: ${resolveAgentKind(reviewerChoice)} agent '${reviewerChoice.name}', up to ${maxIterations} iterations\n`,
      );
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
      ...(broker.guard ? { brokerGuard: broker.guard } : {}),
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
    io.stdout.write(
      `outcome: ${result.outcome} (${result.reason})${result.iterations > 1 ? ` after ${result.iterations} iterations` : ''}\n`,
    );
    if (result.validation)
      io.stdout.write(`validation: ${result.validation.passed ? 'PASS' : `FAIL (exit ${result.validation.exitCode})`}\n`);
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
