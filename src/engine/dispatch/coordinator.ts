// The coordinator's side of `refinery run --workers`: remote slots for the executor. A stage that
// may run elsewhere is first looked up in the remote cache (a result a worker stored for an
// earlier, interrupted run is taken as is); else the files it reads are stored there, a signed
// job naming it by content hashes goes to the project's shared subscription, and the worker's
// word comes back on the run's own topic. Jobs go out only as fast as workers have free slots
// (free-slots.ts): the others wait here, in order, until a worker says a slot is free. Its result
// is taken from the remote cache exactly as a hit is (every digest and schema checked, published
// atomically, recorded), never from the message.
import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import type { StageCache } from '../remote-cache/stage-cache.ts';
import type { RemoteOutcome, RemoteSlots } from '../executor/remote-slots.ts';
import type { RunStageInput, StageRunContext } from '../executor/stage-runner.ts';
import type { StageOutcomeCode } from '../types/events.ts';
import { base64urlToHex } from '../remote-cache/keys.ts';
import { open, ReplayGuard, seal } from './envelope.ts';
import { Leases } from './leases.ts';
import { parseReply, parseSlots, type Done, type Failed, type Job, type Reply } from './messages.ts';
import { callsTopic, jobsTopic, repliesTopic, slotsTopic } from './topics.ts';
import { FreeSlots } from './free-slots.ts';
import type { WorkerTransport } from './transport.ts';
import { definitionHash } from './stage-identity.ts';

export interface CoordinatorOptions {
  transport: WorkerTransport;
  key: Buffer;
  project: string;
  runId: string;
  root: string;
  /** The pipeline as jobs name it (stage-identity.ts pipelineRef). */
  pipeline: string;
  /** The run's `--param` values. */
  params: Record<string, string>;
  stages: StageCache;
  leaseMs: number;
  takeMs: number;
  localSlots: number;
  force: boolean;
  /** How far a message's time may be from ours. */
  windowMs: number;
  /** A problem that belongs to no stage (a refused message): said once each. */
  warn(message: string): void;
  now?: () => number;
}

/** Refusals (a worker whose checkout differs) before the stage fails: the next delivery may reach another worker. */
const MAX_REFUSALS = 3;

type Answer =
  | { kind: 'done'; worker: string; done: Done; waitedMs: number }
  | { kind: 'failed'; worker: string; failed: Failed }
  | { kind: 'untaken'; waitedMs: number }
  | { kind: 'refused'; worker: string; reason: string }
  | { kind: 'aborted' };

interface Pending {
  job: Job;
  refusals: number;
  started: boolean;
  /** Sent at least once (else it waits in the coordinator for a free slot). */
  sent: boolean;
  /** When it began to wait for a free slot, while it waits. */
  waitingSince: number | undefined;
  /** How long it waited for a free slot, in all. */
  waitedMs: number;
  answer(a: Answer): void;
  onTaken(worker: string): void;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export class Coordinator implements RemoteSlots {
  readonly localSlots: number;
  private readonly leases: Leases;
  private readonly guard: ReplayGuard;
  private readonly pending = new Map<string, Pending>();
  private readonly stop: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private offline = false;
  private readonly now: () => number;
  private readonly replies: string;
  private readonly slotsTopic: string;
  private readonly slots = new FreeSlots();
  /** Jobs waiting for a free slot, oldest first. */
  private readonly waiting: Pending[] = [];

  constructor(private readonly options: CoordinatorOptions) {
    this.localSlots = options.localSlots;
    this.leases = new Leases({
      leaseMs: options.leaseMs,
      takeMs: options.takeMs,
      resendMs: Math.max(500, Math.min(options.leaseMs, options.takeMs / 4)),
    });
    this.guard = new ReplayGuard(options.windowMs);
    this.now = options.now ?? Date.now;
    this.replies = repliesTopic(options.project, options.runId);
    this.slotsTopic = slotsTopic(options.project);
  }

  /** Listens on the run's topic; before any job goes out. */
  async start(): Promise<void> {
    const { transport } = this.options;
    this.stop.push(
      transport.onMessage((topic, payload) => {
        if (topic === this.replies) this.onReply(payload);
        else if (topic === this.slotsTopic) this.onSlots(payload);
      }),
      transport.onOffline(() => {
        this.offline = true;
      }),
      transport.onReconnect(() => this.onReconnect()),
    );
    await transport.subscribe(this.replies);
    await transport.subscribe(this.slotsTopic);
    this.call();
    this.timer = setInterval(() => this.tick(), Math.max(20, Math.min(250, this.options.leaseMs / 4)));
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const s of this.stop.splice(0)) s();
    for (const p of this.pending.values()) p.answer({ kind: 'aborted' });
    await this.options.transport.unsubscribe(this.replies).catch(() => undefined);
    await this.options.transport.unsubscribe(this.slotsTopic).catch(() => undefined);
  }

  /** Asks every worker for its free slots (they answer on the slots topic). */
  private call(): void {
    const { transport, key, project, runId } = this.options;
    transport.publish(callsTopic(project), seal(key, 'coordinator', { kind: 'call', run: runId }, this.now())).catch(() => undefined);
  }

  keepsLocal(input: RunStageInput): string | undefined {
    const { inst } = input;
    if (inst.spec.local) return 'local: true';
    if (input.parts.local) return input.parts.local;
    if (inst.loop) return 'a loop iteration (loops run where the pipeline runs)';
    if (input.inputs.some((f) => path.isAbsolute(f))) return 'it reads files outside the project';
    return undefined;
  }

  async run(input: RunStageInput, ctx: StageRunContext, deps: readonly StageInstance[]): Promise<RemoteOutcome> {
    const { inst } = input;
    const force = this.options.force || input.reason.includes('stale_if');
    if (!force) {
      const hit = await this.options.stages.fetch(input, ctx, true);
      if (hit) return hit;
    }
    // Dispatching starts here: the lookup above is what a local run with a remote cache makes too.
    const started = this.now();
    const files = await this.storeFiles(input, ctx, deps);
    if ('problem' in files) return this.failure('no-worker', files.problem);
    const job: Job = {
      kind: 'job',
      project: this.options.project,
      run: this.options.runId,
      job: inst.id,
      attempt: 1,
      pipeline: this.options.pipeline,
      params: this.options.params,
      stage: inst.stageId,
      instance: inst.id,
      definition: definitionHash(inst),
      fingerprint: input.fingerprint,
      parts: {
        code: input.parts.code,
        params: input.parts.params,
        inputs: input.parts.inputs,
        deps: input.parts.deps,
        schemas: input.parts.schemas,
      },
      skipped: [],
      files: files.files,
      leaseMs: this.options.leaseMs,
      force,
    };
    const answer = await this.dispatch(job, ctx, input.reason);
    const answeredAt = this.now();
    switch (answer.kind) {
      case 'aborted':
        return { status: 'aborted', code: 'interrupted', attempts: 0, reason: 'run interrupted' };
      case 'untaken':
        return this.failure(
          'no-worker',
          `no worker took it within ${seconds(answer.waitedMs)}: start \`refinery worker --broker URL --remote-cache URL\` in a checkout of project '${this.options.project}' (or raise --take-timeout)`,
        );
      case 'refused':
        return this.failure('worker-refused', `worker ${answer.worker} refused it: ${answer.reason}`, answer.worker);
      case 'failed':
        return {
          status: 'failed',
          code: knownCode(answer.failed.code),
          attempts: answer.failed.attempts,
          reason: `on worker ${answer.worker}: ${answer.failed.reason}`,
          worker: answer.worker,
        };
      case 'done':
        return this.take(input, ctx, answer, { started, answeredAt });
    }
  }

  /** The worker's result, from the remote cache as a hit is taken: checked, published, recorded. */
  private async take(
    input: RunStageInput,
    ctx: StageRunContext,
    answer: { worker: string; done: Done; waitedMs: number },
    at: { started: number; answeredAt: number },
  ): Promise<RemoteOutcome> {
    const { worker, done } = answer;
    const fetched = await this.options.stages.fetch(input, ctx, false, done.outputs);
    if (!fetched)
      return this.failure(
        'worker-result-refused',
        `worker ${worker} said it stored the result, but the remote cache has no entry for it that holds (see the warning)`,
        worker,
      );
    // What dispatching added to the stage: storing its inputs, the trips through the broker, the
    // worker's upload and this fetch; not its run, nor its wait for a slot while every slot was
    // taken (here, where it waited for a worker to say a slot was free, or in the worker). A slot
    // that stood free while the job waited here (the worker's word on its way) is counted: the
    // part of the wait no longer than the slot's idle time (an upper bound: the idle time also
    // holds the job's trip out, counted once already).
    const queueing = Math.max(0, answer.waitedMs - done.idleMs) + done.queuedMs;
    const overhead = Math.max(0, at.answeredAt - at.started - queueing - done.runMs + (this.now() - at.answeredAt));
    ctx.bus.emit({
      type: 'stage-report',
      stage: input.inst.id,
      report: { kind: 'metric', name: 'dispatch-overhead', value: overhead, unit: 'ms' },
    });
    const { remote: _saved, ...outcome } = fetched;
    return {
      ...outcome,
      code: 'ran',
      attempts: 1,
      summary: done.how === 'cached' ? `from the remote cache, through worker ${worker}` : `ran on worker ${worker}`,
      worker,
    };
  }

  private failure(code: StageOutcomeCode, reason: string, worker?: string): RemoteOutcome {
    return { status: 'failed', code, attempts: 0, reason, ...(worker ? { worker } : {}) };
  }

  /** Every file the stage reads, stored in the CAS: its inputs, and what the stages it depends on wrote. */
  private async storeFiles(
    input: RunStageInput,
    ctx: StageRunContext,
    deps: readonly StageInstance[],
  ): Promise<{ files: Job['files'] } | { problem: string }> {
    const paths = new Set(input.inputs);
    for (const dep of deps) for (const o of Object.values(dep.outputs)) paths.add(o.path);
    const files: Job['files'] = [];
    for (const rel of [...paths].sort()) {
      const stamp = ctx.hashes.stamp(rel);
      // A dependency's output that is not there (it was skipped) is not read either.
      if (!stamp) continue;
      files.push({ path: rel, sha256: base64urlToHex(stamp[3]), size: stamp[0] });
    }
    const problems = await Promise.all(
      files.map((f) => this.options.stages.remote.storeFile(path.join(this.options.root, f.path), f.sha256, f.size)),
    );
    const at = problems.findIndex((p) => p !== undefined);
    if (at >= 0) return { problem: `its input ${files[at]?.path} could not be stored in the remote cache: ${problems[at]}` };
    return { files };
  }

  private dispatch(job: Job, ctx: StageRunContext, reason: string): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      const onAbort = (): void => pending.answer({ kind: 'aborted' });
      const pending: Pending = {
        job,
        refusals: 0,
        started: false,
        sent: false,
        waitingSince: undefined,
        waitedMs: 0,
        answer: (a) => {
          if (this.pending.get(job.job) !== pending) return;
          this.pending.delete(job.job);
          this.unwait(pending);
          this.leases.settle(job.job);
          ctx.signal.removeEventListener('abort', onAbort);
          resolve(a);
        },
        onTaken: (worker) => {
          if (pending.started) return;
          pending.started = true;
          ctx.bus.emit({ type: 'stage-start', stage: job.instance, attempt: 1, reason, worker });
        },
      };
      this.pending.set(job.job, pending);
      if (ctx.signal.aborted) return onAbort();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      pending.waitingSince = this.now();
      this.waiting.push(pending);
      this.pump();
    });
  }

  private unwait(pending: Pending): void {
    const at = this.waiting.indexOf(pending);
    if (at >= 0) this.waiting.splice(at, 1);
    if (pending.waitingSince !== undefined) pending.waitedMs += this.now() - pending.waitingSince;
    pending.waitingSince = undefined;
  }

  /**
   * Sends waiting jobs while the workers have free slots no job on its way claims. A job sent
   * that no worker has said it took holds a slot: the broker is handing it to one.
   */
  private pump(): void {
    if (this.offline || this.waiting.length === 0) return;
    let untaken = 0;
    for (const p of this.pending.values())
      if (p.sent && this.leases.has(p.job.job) && this.leases.takers(p.job.job).length === 0) untaken++;
    let credit = this.slots.free(this.now()) - untaken;
    while (credit > 0) {
      const next = this.waiting[0];
      if (!next) return;
      this.unwait(next);
      this.send(next);
      credit--;
    }
  }

  /** Sends the job (again, as a new attempt): a fresh nonce and time, so it is no replay. */
  private send(pending: Pending): void {
    pending.sent = true;
    const attempt = this.leases.send(pending.job.job, this.now());
    pending.job = { ...pending.job, attempt };
    this.publish(pending);
  }

  private publish(pending: Pending): void {
    const { transport, key, project } = this.options;
    // A publish that fails while offline is sent again on reconnect (onReconnect).
    transport.publish(jobsTopic(project), seal(key, 'coordinator', pending.job, this.now())).catch(() => undefined);
  }

  private onReconnect(): void {
    this.offline = false;
    this.leases.resume(this.now());
    // Jobs no worker has taken may have been lost with the broker: sent again (a duplicate is harmless).
    for (const p of this.pending.values()) if (p.sent && this.leases.takers(p.job.job).length === 0) this.publish(p);
    // The workers' word on their slots may have been lost too.
    this.call();
  }

  private tick(): void {
    if (this.offline) return;
    this.untakenWaiting();
    this.pump();
    for (const due of this.leases.due(this.now())) {
      const pending = this.pending.get(due.job);
      if (!pending) {
        this.leases.settle(due.job);
        continue;
      }
      if (due.kind === 'untaken') pending.answer({ kind: 'untaken', waitedMs: due.waitedMs });
      else if (due.kind === 'resend') this.publish(pending);
      else {
        this.options.warn(
          `worker ${due.workers.join(', ')} said nothing of ${due.job} for ${seconds(due.silentMs)} (its lease): dispatched again`,
        );
        this.send(pending);
      }
    }
  }

  /**
   * Jobs waiting for a slot while no worker says anything at all, for as long as a sent job may
   * go untaken: nobody is there to take them. Workers that are busy say so every ANNOUNCE_MS.
   */
  private untakenWaiting(): void {
    const now = this.now();
    const heard = this.slots.lastHeardAt();
    for (const p of [...this.waiting]) {
      const since = Math.max(p.waitingSince ?? now, heard ?? 0);
      if (now - since >= this.options.takeMs) p.answer({ kind: 'untaken', waitedMs: now - (p.waitingSince ?? now) });
    }
  }

  private onSlots(payload: Buffer): void {
    const opened = this.openSigned(payload, this.slotsTopic, parseSlots);
    if (!opened) return;
    this.slots.update(opened.from, opened.value.slots.free, opened.value.slots.seq, this.now());
    this.pump();
  }

  private onReply(payload: Buffer): void {
    const opened = this.openSigned(payload, this.replies, parseReply);
    if (!opened || opened.value.reply.run !== this.options.runId) return;
    this.handle(opened.from, opened.value.reply);
  }

  /** A message checked (signature, replay, shape) as every one from a worker is; undefined, with a warning, when refused. */
  private openSigned<T extends object>(
    payload: Buffer,
    topic: string,
    parse: (body: unknown) => T | { problem: string },
  ): { from: string; value: T } | undefined {
    const opened = open(this.options.key, payload, this.guard, this.now());
    if (!opened.ok) {
      this.options.warn(`refused a message on ${topic}: ${opened.reason}`);
      return undefined;
    }
    const parsed = parse(opened.body);
    if ('problem' in parsed) {
      this.options.warn(`refused a message from ${opened.from}: ${parsed.problem}`);
      return undefined;
    }
    return { from: opened.from, value: parsed };
  }

  private handle(worker: string, reply: Reply): void {
    this.handleReply(worker, reply);
    // A job taken no longer holds a slot on its way; a worker's word may bring free slots.
    this.pump();
  }

  private handleReply(worker: string, reply: Reply): void {
    const now = this.now();
    if (reply.kind === 'taken') this.slots.update(worker, reply.free, reply.seq, now);
    else this.slots.heard(worker, now);
    if (reply.kind === 'beat') {
      this.leases.beat(worker, reply.jobs, now);
      return;
    }
    const pending = this.pending.get(reply.job);
    // A late word on a job that has its answer (a slow duplicate): its result is the same entry.
    if (!pending) return;
    switch (reply.kind) {
      case 'taken':
        this.leases.took(reply.job, worker, now);
        pending.onTaken(worker);
        return;
      case 'back':
        this.leases.handedBack(reply.job, worker);
        if (this.leases.takers(reply.job).length === 0) this.send(pending);
        return;
      case 'done':
        if (reply.fingerprint !== pending.job.fingerprint) {
          this.options.warn(`worker ${worker} answered ${reply.job} with another fingerprint; ignored`);
          return;
        }
        pending.answer({ kind: 'done', worker, done: reply, waitedMs: pending.waitedMs });
        return;
      case 'failed':
        if (reply.code === 'worker-refused') {
          pending.refusals += 1;
          this.options.warn(`worker ${worker} refused ${reply.job}: ${reply.reason}`);
          if (pending.refusals >= MAX_REFUSALS) pending.answer({ kind: 'refused', worker, reason: reply.reason });
          else this.send(pending);
          return;
        }
        pending.answer({ kind: 'failed', worker, failed: reply });
        return;
    }
  }
}

const CODES = new Set<string>([
  'command-failed',
  'task-threw',
  'unknown-task',
  'task-load-failed',
  'invalid-params',
  'invalid-artifact',
  'publish-failed',
  'timed-out',
  'output-outside-project',
  'output-path-blocked',
  'missing-input',
  'unreadable-input',
  'expression-failed',
  'state-write-failed',
  'file-system-error',
  'internal-error',
  'worker-result-refused',
]);

/** A failure code from a worker, if it is one a failed stage may have; else internal-error. */
function knownCode(code: string): StageOutcomeCode {
  return CODES.has(code) ? (code as StageOutcomeCode) : 'internal-error';
}
