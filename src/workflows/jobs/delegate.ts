import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { GuardTopics } from '../broker/topic-guard.ts';
import type { BrokerConfig } from '../mqtt/broker-config.ts';
import { recordBlockOf } from '../mqtt/broker-config.ts';
import type { Agent, AgentHandle, AgentLaunch } from './agents/agent.ts';
import { AuditLog } from './audit-log.ts';
import { needsBrokerUrl } from './broker-resolve.ts';
import { brokerCredential } from './event-auth.ts';
import { buildInstructions, isApproval, reviewerPrompt, reworkPrompt } from './instructions.ts';
import { JobWatch, type WatchDiagnostic, type WatchOutcome } from './job-watch.ts';
import type { RegistryPaths } from './paths.ts';
import { publishJobEvent } from './publisher.ts';
import { redactRecord } from './record-codec.ts';
import { JobRegistry } from './registry.ts';
import { OUTCOME_EXIT_CODES, type JobEventPayload, type JobExtras, type JobOutcomeKind, type JobRecord, type JobType } from './types.ts';
import { runValidation, type ValidationResult } from './validate-hook.ts';

export interface AgentSpec {
  name: string;
  session: string;
  agent: Agent;
}

export interface DelegateOptions {
  paths: RegistryPaths;
  broker: BrokerConfig;
  /** Given when `broker` is refinery's embedded one: the job's topics go behind the job's login. */
  brokerGuard?: GuardTopics;
  env: NodeJS.ProcessEnv;
  prompt: string;
  worker: AgentSpec;
  /** Required for loop and discuss jobs. */
  reviewer?: AgentSpec;
  type: JobType;
  maxIterations: number;
  timeoutSec: number;
  idleTimeoutSec: number;
  expectedArtifacts: string[];
  /** `--validate SCRIPT`, run after a completed job. */
  validate?: string;
  workdir: string;
  compat: boolean;
  /** argv of the publish command for the instructions, without `--job`. */
  publisherArgv: string[];
  /** Environment for agent processes beyond the job's own variables (e.g. broker credentials). */
  agentEnv?: NodeJS.ProcessEnv;
  /** How long to wait for a terminal event after a process agent exited (default 3 s). */
  exitGraceMs?: number;
  jobId?: string;
  signal?: AbortSignal;
  hooks?: DelegateHooks;
}

export interface DelegateHooks {
  registered?: (record: JobRecord) => void;
  phase?: (phase: { iteration: number; role: 'worker' | 'reviewer'; agent: string }) => void;
  event?: (payload: JobEventPayload) => void;
  diagnostic?: (diagnostic: WatchDiagnostic) => void;
  note?: (message: string) => void;
}

export interface DelegateResult {
  jobId: string;
  outcome: JobOutcomeKind;
  reason: string;
  iterations: number;
  feedback?: string;
  validation?: ValidationResult;
  exitCode: number;
  logDir: string;
  /** How the final phase learned its outcome. */
  via: WatchOutcome['via'];
}

function sessionLabel(kind: string, session: string): string {
  return kind === 'tmux' ? session : kind;
}

/** Register, subscribe, hand over, wait; for loop/discuss, alternate worker and reviewer; then validate. */
export async function delegateJob(options: DelegateOptions): Promise<DelegateResult> {
  if (options.type !== 'direct' && !options.reviewer) throw new Error(`a ${options.type} job needs a reviewer agent (--reviewer)`);
  const registry = new JobRegistry(options.paths);
  const audit = new AuditLog(options.paths);
  const { record, extras } = await registry.register({
    prompt: options.prompt,
    agent: options.worker.name,
    // Only a tmux agent has a session; the others are named by their kind.
    agentSession: sessionLabel(options.worker.agent.kind, options.worker.session),
    broker: recordBlockOf(options.broker),
    timeoutSec: options.timeoutSec,
    idleTimeoutSec: options.idleTimeoutSec,
    expectedArtifacts: options.expectedArtifacts,
    compat: options.compat,
    ...(options.jobId !== undefined ? { jobId: options.jobId } : {}),
    extras: {
      job_type: options.type,
      agent_kind: options.worker.agent.kind as 'command' | 'tmux' | 'human',
      reviewer: options.reviewer?.name ?? null,
      reviewer_session: options.reviewer?.session ?? null,
      max_iterations: options.maxIterations,
      broker_url: needsBrokerUrl(options.broker) ? options.broker.url : null,
      broker_guarded: options.brokerGuard !== undefined && !options.compat,
    },
  });
  const login = extras.broker_guarded ? brokerCredential(record) : undefined;
  const unguard = login && options.brokerGuard ? options.brokerGuard(record.topic_prefix, login) : () => {};
  try {
    return await runJob(options, registry, audit, record, extras);
  } finally {
    unguard();
  }
}

async function runJob(
  options: DelegateOptions,
  registry: JobRegistry,
  audit: AuditLog,
  record: JobRecord,
  extras: JobExtras,
): Promise<DelegateResult> {
  await audit.writeMeta(record, extras);
  await audit.writeStatus({ job_id: record.job_id, status: 'pending', updated_at: record.created_at });
  await audit.local(record.job_id, 'registered', `${options.type} job for ${options.worker.agent.describe()}`);
  options.hooks?.registered?.(redactRecord(record));
  const run = new DelegateRun(options, registry, audit, record.job_id);
  const outcome = options.type === 'direct' ? await run.direct() : await run.reviewLoop();
  return run.finish(outcome);
}

interface PhaseOutcome {
  watch: WatchOutcome;
  iterations: number;
  feedback?: string;
  kind: JobOutcomeKind;
  reason: string;
}

class DelegateRun {
  constructor(
    private readonly options: DelegateOptions,
    private readonly registry: JobRegistry,
    private readonly audit: AuditLog,
    private readonly jobId: string,
  ) {}

  async direct(): Promise<PhaseOutcome> {
    const watch = await this.phase('worker', 1, this.options.prompt, this.options.worker);
    return { watch, iterations: 1, kind: watch.kind, reason: watch.reason };
  }

  /** The seed's loop/discuss orchestration: worker, reviewer, rework with feedback, up to max iterations. */
  async reviewLoop(): Promise<PhaseOutcome> {
    const { options } = this;
    const reviewer = options.reviewer as AgentSpec;
    let prompt = options.prompt;
    for (let iteration = 1; ; iteration += 1) {
      const work = await this.phase('worker', iteration, prompt, options.worker);
      if (work.kind !== 'completed') return { watch: work, iterations: iteration, kind: work.kind, reason: `worker: ${work.reason}` };
      const review = await this.phase('reviewer', iteration, reviewerPrompt(options.type, this.jobId, options.prompt), reviewer);
      if (review.kind !== 'completed')
        return { watch: review, iterations: iteration, kind: review.kind, reason: `reviewer: ${review.reason}` };
      const feedback = verdictOf(review);
      await this.registry.update(this.jobId, (_r, extras) => ({ extras: { ...extras, feedback } }));
      await this.audit.local(this.jobId, 'feedback', feedback);
      if (isApproval(options.type, feedback)) {
        await this.registry.setStatus(this.jobId, 'completed');
        return { watch: review, iterations: iteration, feedback, kind: 'completed', reason: 'the reviewer approved' };
      }
      if (iteration >= options.maxIterations) {
        await this.registry.setStatus(this.jobId, 'error');
        return {
          watch: review,
          iterations: iteration,
          feedback,
          kind: 'error',
          reason: `no approval after ${iteration} iterations (--max-iterations)`,
        };
      }
      prompt = reworkPrompt(this.jobId, feedback, options.prompt);
    }
  }

  async finish(outcome: PhaseOutcome): Promise<DelegateResult> {
    const { options } = this;
    let validation: ValidationResult | undefined;
    if (outcome.kind === 'completed' && options.validate) {
      validation = await runValidation({
        script: options.validate,
        jobId: this.jobId,
        registryDir: options.paths.registryDir,
        workdir: options.workdir,
        outputFile: path.join(this.audit.dir(this.jobId), 'validate.log'),
        env: options.agentEnv ?? {},
        ...(options.signal ? { signal: options.signal } : {}),
      });
      await this.audit.local(this.jobId, 'validation', validation.passed ? 'pass' : `fail (exit ${validation.exitCode})`);
    }
    const record = await this.registry.get(this.jobId);
    await this.audit.writeStatus({
      job_id: this.jobId,
      status: record.status,
      updated_at: record.updated_at,
      outcome: outcome.kind,
      reason: outcome.reason,
      iteration: outcome.iterations,
      ...(validation ? { validation: validation.passed ? 'pass' : 'fail' } : {}),
    });
    await this.audit.local(this.jobId, 'outcome', `${outcome.kind}: ${outcome.reason}`);
    const failedValidation = validation !== undefined && !validation.passed;
    return {
      jobId: this.jobId,
      outcome: outcome.kind,
      reason: failedValidation ? `validation failed (exit ${validation?.exitCode})` : outcome.reason,
      iterations: outcome.iterations,
      ...(outcome.feedback !== undefined ? { feedback: outcome.feedback } : {}),
      ...(validation ? { validation } : {}),
      exitCode: failedValidation ? 1 : OUTCOME_EXIT_CODES[outcome.kind],
      logDir: this.audit.dir(this.jobId),
      via: outcome.watch.via,
    };
  }

  /** One agent turn: reset to pending, subscribe, hand over, wait for the first terminal event or a timeout. */
  private async phase(role: 'worker' | 'reviewer', iteration: number, prompt: string, spec: AgentSpec): Promise<WatchOutcome> {
    const { options } = this;
    const { record } = await this.registry.update(this.jobId, (current, extras) => ({
      record: { ...current, status: 'pending', prompt, agent: spec.name, agent_session: sessionLabel(spec.agent.kind, spec.session) },
      extras: { ...extras, iteration },
    }));
    await this.audit.local(this.jobId, 'iteration', `${role} ${iteration} (${spec.agent.describe()})`);
    options.hooks?.phase?.({ iteration, role, agent: spec.agent.describe() });
    const watch = await this.subscribe(record.last_seq);
    const launch = await this.launchFor(role, iteration, prompt);
    let handle: AgentHandle | undefined;
    try {
      handle = await spec.agent.start(launch);
    } catch (error) {
      await this.reportError(`agent failed to start: ${(error as Error).message}`);
    }
    const outcome = handle ? await this.awaitOutcome(watch, handle) : await watch.result;
    await watch.close();
    await this.settleAgent(handle);
    await this.recordPhase(outcome);
    return outcome;
  }

  /** Connected and subscribed before the agent starts; a broker that cannot be reached ends the job as error. */
  private async subscribe(afterSeq: number): Promise<JobWatch> {
    const { options } = this;
    try {
      return await JobWatch.start({
        registry: this.registry,
        audit: this.audit,
        jobId: this.jobId,
        broker: options.broker,
        env: options.env,
        timeoutMs: options.timeoutSec * 1000,
        idleTimeoutMs: options.idleTimeoutSec * 1000,
        afterSeq,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.hooks?.event ? { onEvent: options.hooks.event } : {}),
        ...(options.hooks?.diagnostic ? { onDiagnostic: options.hooks.diagnostic } : {}),
      });
    } catch (error) {
      await this.registry.setStatus(this.jobId, 'error', { onlyIfNotTerminal: true });
      await this.audit.local(this.jobId, 'outcome', `error: could not subscribe: ${(error as Error).message}`);
      throw error;
    }
  }

  private async launchFor(role: 'worker' | 'reviewer', iteration: number, prompt: string): Promise<AgentLaunch> {
    const { options } = this;
    const dir = this.audit.dir(this.jobId);
    await mkdir(dir, { recursive: true });
    const instructions = buildInstructions({
      jobId: this.jobId,
      publisherArgv: options.publisherArgv,
      prompt,
      idleTimeoutSec: options.idleTimeoutSec,
      expectedArtifacts: options.expectedArtifacts,
      role,
      type: options.type,
    });
    const instructionsFile = path.join(dir, `instructions.${iteration}.${role}.md`);
    await writeFile(instructionsFile, instructions, { mode: 0o600 });
    return {
      jobId: this.jobId,
      role,
      iteration,
      instructions,
      instructionsFile,
      workdir: options.workdir,
      outputFile: path.join(dir, `agent.${iteration}.${role}.log`),
      env: {
        ...options.env,
        ...options.agentEnv,
        REFINERY_JOB_ID: this.jobId,
        REFINERY_JOB_ROLE: role,
        REFINERY_JOB_ITERATION: String(iteration),
        REFINERY_REGISTRY_DIR: options.paths.registryDir,
      },
    };
  }

  /** A process agent that exits without a terminal event gets one published for it (as the seed's trap). */
  private async awaitOutcome(watch: JobWatch, handle: AgentHandle): Promise<WatchOutcome> {
    const first = await Promise.race([watch.result, handle.exited.then((exit) => ({ exit }))]);
    if (!('exit' in first)) return first;
    const grace = this.options.exitGraceMs ?? 3000;
    const late = await Promise.race([watch.result, delay(grace).then(() => undefined)]);
    if (late) return late;
    const how = first.exit.signal ? `signal ${first.exit.signal}` : `code ${first.exit.code}`;
    await this.reportError(`agent exited (${how}) without reporting completed or error`);
    return watch.result;
  }

  private async reportError(detail: string): Promise<void> {
    this.options.hooks?.note?.(detail);
    await this.audit.local(this.jobId, 'agent-exit', detail);
    try {
      await publishJobEvent({
        registry: this.registry,
        jobId: this.jobId,
        event: 'error',
        detail,
        env: this.options.env,
        broker: this.options.broker,
        timeoutMs: 10_000,
      });
    } catch (error) {
      this.options.hooks?.note?.(`could not publish the error event: ${(error as Error).message}`);
      await this.registry.setStatus(this.jobId, 'error', { onlyIfNotTerminal: true });
    }
  }

  private async settleAgent(handle: AgentHandle | undefined): Promise<void> {
    if (!handle?.ownsProcess) return;
    const exited = await Promise.race([handle.exited.then(() => true), delay(this.options.exitGraceMs ?? 3000).then(() => false)]);
    if (!exited) await handle.stop();
  }

  private async recordPhase(outcome: WatchOutcome): Promise<void> {
    const status = outcome.kind === 'completed' ? 'completed' : 'error';
    const interrupted = this.options.signal?.aborted === true;
    await this.registry.setStatus(this.jobId, interrupted ? 'cancelled' : status, { onlyIfNotTerminal: true });
  }
}

function verdictOf(review: WatchOutcome): string {
  const data = review.terminal?.data;
  const feedback = data && typeof data.feedback === 'string' ? data.feedback : undefined;
  return feedback ?? review.terminal?.detail ?? review.reason;
}

/** A wait that never keeps the process alive by itself. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
