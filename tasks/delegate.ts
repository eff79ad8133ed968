import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { makeAgent } from '../src/workflows/jobs/agents/agent-factory.ts';
import { acquireBroker } from '../src/workflows/jobs/broker-resolve.ts';
import { delegateJob, type AgentSpec } from '../src/workflows/jobs/delegate.ts';
import { formatEventLine } from '../src/workflows/jobs/event-payload.ts';
import { buildInstructions } from '../src/workflows/jobs/instructions.ts';
import { newJobId } from '../src/workflows/jobs/job-id.ts';
import { registryPaths } from '../src/workflows/jobs/paths.ts';
import { publisherArgv } from '../src/workflows/jobs/publisher-command.ts';
import { redactRecord } from '../src/workflows/jobs/record-codec.ts';
import { JobRegistry } from '../src/workflows/jobs/registry.ts';

const agentKind = z.enum(['command', 'tmux', 'human']).optional();
const argv = z.array(z.string().min(1)).min(1).optional();

const params = z.strictObject({
  prompt: z.string().min(1),
  /** The agent's label (claude-code, codex, human, ...). */
  agent: z.string().min(1).default('claude-code'),
  /** command (a non-interactive CLI, instructions on stdin), tmux (paste into a live session) or human. */
  agent_kind: agentKind,
  agent_session: z.string().default('tmux:claude'),
  /** argv of a command agent, e.g. ["claude", "-p"]; defaults to the preset for `agent`. */
  command: argv,
  type: z.enum(['direct', 'loop', 'discuss']).default('direct'),
  reviewer: z.string().min(1).default('hermes'),
  reviewer_kind: agentKind,
  reviewer_session: z.string().default('tmux:hermes'),
  reviewer_command: argv,
  max_iterations: z.int().min(1).default(5),
  /** Seconds, total (from subscribe time) and idle (since the last event). */
  timeout: z.number().positive().default(3600),
  idle_timeout: z.number().positive().default(120),
  /** A script run with bash after a completed job (env JOB_ID, REGISTRY_DIR); exit 0 passes. */
  validate: z.string().min(1).optional(),
  workdir: z.string().default('.'),
  registry_dir: z.string().default('.mam/jobs'),
  /** mqtt:// mqtts:// ws:// wss:// URL; else MQTT_BROKER...; else an embedded broker for this stage. */
  broker: z.string().optional(),
  /** Accept the seed's Python publisher (no job token). */
  compat: z.boolean().default(false),
  /** Files (relative to workdir) the agent must write besides this stage's own outputs. */
  expected_artifacts: z.array(z.string().min(1)).default([]),
  dry_run: z.boolean().default(false),
  tmux_server: z.string().optional(),
  /** What the agent runs to publish (argv, without --job); default: this refinery's `jobs publish`. */
  publish_command: argv,
});

type Params = z.output<typeof params>;

export default defineTask({
  name: 'delegate',
  description:
    "Hand a job to an agent over MQTT (wire-compatible with the delegate-job seed) and wait for completed/error; the stage's other outputs are files the agent must write.",
  params,
  outputs: { record: { default: '.mam/delegate/record.json', schema: 'job-record', description: 'The job record, secrets redacted' } },
  async run(ctx) {
    const p = ctx.params;
    const workdir = path.resolve(ctx.root, p.workdir);
    const paths = registryPaths(ctx.root, p.registry_dir);
    const recordOut = ctx.outputs.record;
    if (!recordOut)
      throw new Error(
        "a delegate stage needs a 'record' output, where the job record goes: add `record: out/job.json` (any path) to the stage's outputs",
      );
    // Every other output is an artifact the agent writes, at the staging path the engine validates.
    const artifacts = Object.entries(ctx.outputs).filter(([name]) => name !== 'record');
    const expected = [...p.expected_artifacts, ...artifacts.map(([, file]) => path.relative(workdir, file))];
    const publish = p.publish_command ?? publisherArgv(ctx.root, paths.registryDir);
    if (p.dry_run) return dryRun(ctx, p, expected, publish, recordOut);
    const show = (text: string): void => ctx.log(`[human agent] do the task below, then publish the events it names:\n${text}`);
    const worker: AgentSpec = { name: p.agent, session: p.agent_session, agent: makeAgent(agentChoice(p, 'worker', show)) };
    const reviewer: AgentSpec | undefined =
      p.type === 'direct'
        ? undefined
        : { name: p.reviewer, session: p.reviewer_session, agent: makeAgent(agentChoice(p, 'reviewer', show)) };
    const broker = await acquireBroker({ ...(p.broker ? { url: p.broker } : {}), env: process.env });
    let result;
    const started = new Date();
    try {
      result = await delegateJob({
        paths,
        broker: broker.config,
        ...(broker.guard ? { brokerGuard: broker.guard } : {}),
        env: process.env,
        prompt: p.prompt,
        worker,
        ...(reviewer ? { reviewer } : {}),
        type: p.type,
        maxIterations: p.max_iterations,
        timeoutSec: p.timeout,
        idleTimeoutSec: p.idle_timeout,
        expectedArtifacts: expected,
        ...(p.validate ? { validate: p.validate } : {}),
        workdir,
        compat: p.compat,
        publisherArgv: publish,
        signal: ctx.signal,
        hooks: {
          registered: (record) => ctx.log(`registered job ${record.job_id} (broker ${broker.origin})`),
          phase: (phase) => ctx.log(`[${phase.role} ${phase.iteration}] ${phase.agent}`),
          event: (payload) => ctx.log(formatEventLine(payload)),
          diagnostic: (d) => ctx.report({ kind: 'warning', message: `job event ${d.kind}${'reason' in d ? ` (${d.reason})` : ''}` }),
          note: (message) => ctx.report({ kind: 'warning', message }),
        },
      });
    } finally {
      await broker.release();
    }
    ctx.report({ kind: 'metric', name: 'delegate.iterations', value: result.iterations });
    ctx.report({
      kind: 'job',
      jobId: result.jobId,
      agent: p.agent,
      type: p.type,
      outcome: result.outcome,
      iterations: result.iterations,
      startedAt: started.toISOString(),
      durationMs: Date.now() - started.getTime(),
    });
    if (result.exitCode !== 0) {
      throw new Error(
        `delegate job ${result.jobId} ended ${result.outcome}: ${result.reason} (audit log: ${path.relative(ctx.root, result.logDir)})`,
      );
    }
    const missing = artifacts.filter(([, file]) => !existsSync(file)).map(([name]) => `${name} -> ${ctx.outputTargets[name]}`);
    if (missing.length > 0) {
      throw new Error(
        `delegate job ${result.jobId} reported completed but did not write: ${missing.join(', ')} (see ${path.relative(ctx.root, result.logDir)})`,
      );
    }
    const record = redactRecord(await new JobRegistry(paths).get(result.jobId));
    writeFileSync(recordOut, `${JSON.stringify(record, null, 2)}\n`);
    return { summary: `job ${result.jobId} completed${result.iterations > 1 ? ` after ${result.iterations} iterations` : ''}` };
  },
});

function agentChoice(p: Params, role: 'worker' | 'reviewer', show: (text: string) => void) {
  const worker = role === 'worker';
  const kind = worker ? p.agent_kind : p.reviewer_kind;
  const command = worker ? p.command : p.reviewer_command;
  return {
    name: worker ? p.agent : p.reviewer,
    session: worker ? p.agent_session : p.reviewer_session,
    ...(kind ? { kind } : {}),
    ...(command ? { command } : {}),
    ...(p.tmux_server ? { tmuxServer: p.tmux_server } : {}),
    show,
  };
}

/** Logs the instructions the agent would get and writes the record that would be registered; delegates nothing. */
function dryRun(
  ctx: { log(message: string): void; outputs: Readonly<Record<string, string>> },
  p: Params,
  expected: string[],
  publish: string[],
  recordOut: string,
) {
  const id = newJobId();
  ctx.log(
    buildInstructions({
      jobId: id,
      publisherArgv: publish,
      prompt: p.prompt,
      idleTimeoutSec: p.idle_timeout,
      expectedArtifacts: expected,
      role: 'worker',
      type: p.type,
    }),
  );
  const now = `${new Date().toISOString().slice(0, 19)}Z`;
  const preview = {
    schema_version: 1,
    job_id: id,
    status: 'cancelled',
    created_at: now,
    updated_at: now,
    prompt: p.prompt,
    agent: p.agent,
    agent_session: p.agent_session,
    broker: { host: '127.0.0.1', port: 0, tls: false, username: null, password: null },
    topic_prefix: `python/mqtt/jobs/${id}`,
    timeout_sec: p.timeout,
    idle_timeout_sec: p.idle_timeout,
    expected_artifacts: expected,
    last_seq: 0,
    auth_token: null,
  };
  writeFileSync(recordOut, `${JSON.stringify(preview, null, 2)}\n`);
  return { summary: `dry run: job ${id} not registered, instructions logged` };
}
