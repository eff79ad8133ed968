// `refinery worker`: takes stage jobs from the project's shared subscription and runs them in this
// checkout through the engine's JobRunner, as many at once as its slots and pools allow. It says
// it took each job, says it still holds it at a third of the lease, and answers with the result's
// digests. It says how many jobs it takes now (free-slots.ts): its free slots and one more, so a
// job it gets starts at once or when the next slot frees, never behind a queue. Stopping
// (SIGTERM), it unsubscribes, gives back the jobs it has not started, and finishes those it runs.
import type { Job, Reply } from '../../engine/dispatch/messages.ts';
import { parseCall, parseJob } from '../../engine/dispatch/messages.ts';
import { open, ReplayGuard, seal } from '../../engine/dispatch/envelope.ts';
import { callsTopic, repliesTopic, sharedJobsTopic, slotsTopic } from '../../engine/dispatch/topics.ts';
import { ANNOUNCE_MS } from '../../engine/dispatch/free-slots.ts';
import type { WorkerTransport } from '../../engine/dispatch/transport.ts';
import type { JobResult, Storing } from '../../engine/dispatch/worker-jobs.ts';
import { Dispatcher } from '../../engine/executor/dispatch.ts';

/** What the worker tells its log. */
export type WorkerEvent =
  | { kind: 'ready'; topic: string }
  | { kind: 'took'; job: Job }
  | { kind: 'finished'; job: Job; result: JobResult; ms: number }
  | { kind: 'handed-back'; job: Job }
  | { kind: 'refused-message'; reason: string }
  | { kind: 'stopping'; running: number; queued: number };

export interface JobExecutor {
  poolOf(job: Job): Promise<string | undefined>;
  run(job: Job): Promise<JobResult | Storing>;
}

export interface WorkerOptions {
  name: string;
  project: string;
  key: Buffer;
  transport: WorkerTransport;
  jobs: JobExecutor;
  concurrency: number;
  pools: Record<string, number>;
  windowMs: number;
  onEvent(event: WorkerEvent): void;
}

/**
 * Jobs a worker asks for beyond its free slots. One keeps its slots busy: the job waits here,
 * after the worker has said it took it (queueing, not dispatch overhead), never in the broker.
 */
const AHEAD = 1;

interface Held {
  job: Job;
  started: boolean;
  receivedAt: number;
  /** When it asked for a slot (its pipeline loaded): its wait for a slot counts from here, not the load. */
  askedAt: number;
  /** How long the slot it went into had stood free when it came; 0 when it waited for one. */
  idleMs: number;
  /** Its stage ran and its result is being stored: its slot is free for the next. */
  storing: boolean;
}

export class Worker {
  private readonly guard: ReplayGuard;
  private readonly slots: Dispatcher;
  /** Jobs taken and not answered, by run and job id. */
  private readonly held = new Map<string, Held>();
  private readonly lastBeat = new Map<string, number>();
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;
  private stopListening: Array<() => void> = [];
  private idle: (() => void) | undefined;
  /** When each free slot became free, oldest first. */
  private freeSince: number[];
  /** Rises with each word on the free slots, so a coordinator can tell the latest. */
  private seq = 0;
  private lastAnnounced = 0;

  constructor(private readonly options: WorkerOptions) {
    this.guard = new ReplayGuard(options.windowMs);
    this.slots = new Dispatcher(options.concurrency, options.pools);
    this.freeSince = Array.from({ length: options.concurrency }, () => Date.now());
  }

  /** Slots no job holds (queued here or running; one whose result is being stored holds none). None while stopping. */
  private free(): number {
    if (this.stopping) return 0;
    let busy = 0;
    for (const h of this.held.values()) if (!h.storing) busy++;
    return Math.max(0, this.options.concurrency - busy);
  }

  /**
   * How many more jobs it takes now, as it tells coordinators: its free slots, and AHEAD more
   * that wait here for the next slot, so a slot that frees starts one at once instead of standing
   * idle while its word goes to the coordinator and a job comes back. A job whose result is being
   * stored counts until its reply is sent: the next job is asked for after the upload, which
   * then does not compete with that job's start (measured: docs/performance.md).
   */
  private wanted(): number {
    return this.stopping ? 0 : Math.max(0, this.options.concurrency + AHEAD - this.held.size);
  }

  /** Says the free slots to every coordinator of the project. */
  private announce(): void {
    const { transport, key, name, project, concurrency } = this.options;
    this.lastAnnounced = Date.now();
    this.seq += 1;
    const body = { kind: 'slots' as const, slots: concurrency, free: this.wanted(), seq: this.seq };
    transport.publish(slotsTopic(project), seal(key, name, body)).catch(() => undefined);
  }

  private onCall(payload: Buffer): void {
    const opened = open(this.options.key, payload, this.guard);
    const parsed = opened.ok ? parseCall(opened.body) : { problem: opened.reason };
    if ('problem' in parsed) {
      this.options.onEvent({ kind: 'refused-message', reason: parsed.problem });
      return;
    }
    this.announce();
  }

  /** A slot is free again (unless a job waiting here took it): said at once. */
  private slotFreed(): void {
    this.countFree();
    this.announce();
  }

  /** One time a slot became free for each free slot: a slot freed now is added, one taken drops the latest. */
  private countFree(): void {
    const free = this.free();
    while (this.freeSince.length > free) this.freeSince.pop();
    while (this.freeSince.length < free) this.freeSince.push(Date.now());
  }

  async start(): Promise<void> {
    const { transport, project } = this.options;
    const topic = sharedJobsTopic(project);
    const calls = callsTopic(project);
    this.stopListening.push(
      transport.onMessage((t, payload) => {
        if (t === calls) this.onCall(payload);
        else if (t === topic || t === topic.replace(/^\$share\/[^/]+\//, '')) this.onJob(payload);
      }),
      transport.onReconnect(() => {
        this.beatAll(true);
        this.announce();
      }),
    );
    await transport.subscribe(calls);
    await transport.subscribe(topic);
    this.announce();
    this.timer = setInterval(() => {
      this.beatAll(false);
      if (Date.now() - this.lastAnnounced >= ANNOUNCE_MS) this.announce();
    }, 100);
    this.options.onEvent({ kind: 'ready', topic });
  }

  /** Stops taking jobs; gives back those not started; resolves once those running have finished. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const topic = sharedJobsTopic(this.options.project);
    await this.options.transport.unsubscribe(topic).catch(() => undefined);
    const running = [...this.held.values()].filter((h) => h.started).length;
    this.options.onEvent({ kind: 'stopping', running, queued: this.held.size - running });
    // No slot is free any more: coordinators send nothing more here.
    this.announce();
    for (const h of [...this.held.values()]) if (!h.started) this.handBack(h);
    if (this.held.size > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    if (this.timer) clearInterval(this.timer);
    for (const s of this.stopListening.splice(0)) s();
  }

  private keyOf(job: Pick<Job, 'run' | 'job'>): string {
    return `${job.run}\0${job.job}`;
  }

  private reply(job: Job, body: Reply): void {
    const { transport, key, name, project } = this.options;
    transport.publish(repliesTopic(project, job.run), seal(key, name, body)).catch(() => undefined);
  }

  private onJob(payload: Buffer): void {
    const opened = open(this.options.key, payload, this.guard);
    if (!opened.ok) {
      this.options.onEvent({ kind: 'refused-message', reason: opened.reason });
      return;
    }
    const parsed = parseJob(opened.body);
    if ('problem' in parsed) {
      this.options.onEvent({ kind: 'refused-message', reason: parsed.problem });
      return;
    }
    const { job } = parsed;
    if (job.project !== this.options.project) {
      this.options.onEvent({ kind: 'refused-message', reason: `a job of project '${job.project}' on this project's topic` });
      return;
    }
    const id = this.keyOf(job);
    const known = this.held.get(id);
    if (known) {
      // Sent again (a lapsed lease, a broker restart): this worker still has it.
      known.job = { ...known.job, attempt: Math.max(known.job.attempt, job.attempt) };
      this.reply(job, { kind: 'taken', run: job.run, job: job.job, attempt: job.attempt, free: this.wanted(), seq: ++this.seq });
      return;
    }
    const receivedAt = Date.now();
    const held: Held = { job, started: false, receivedAt, askedAt: receivedAt, idleMs: 0, storing: false };
    if (this.stopping) return this.handBack(held);
    // A slot free since then takes it (the longest free, so its idle time is not understated).
    const since = this.free() > 0 ? this.freeSince.shift() : undefined;
    if (since !== undefined) held.idleMs = receivedAt - since;
    this.held.set(id, held);
    this.countFree();
    this.reply(job, { kind: 'taken', run: job.run, job: job.job, attempt: job.attempt, free: this.wanted(), seq: ++this.seq });
    this.options.onEvent({ kind: 'took', job });
    void this.schedule(held);
  }

  private async schedule(held: Held): Promise<void> {
    const pool = await this.options.jobs.poolOf(held.job);
    held.askedAt = Date.now();
    await this.slots.dispatch(pool, async () => {
      if (this.stopping || !this.held.has(this.keyOf(held.job))) return;
      held.started = true;
      const startedAt = Date.now();
      let result: JobResult | Storing;
      try {
        result = await this.options.jobs.run(held.job);
      } catch (error) {
        result = failure(error);
      }
      // Its upload goes on without the slot: the job waiting here starts meanwhile.
      if (result.kind === 'storing') {
        held.storing = true;
        this.countFree();
        void result.result.then(
          (r) => this.finish(held, r, startedAt),
          (error: unknown) => this.finish(held, failure(error), startedAt),
        );
        // The upload's first requests are written (on the next tick) before the next job here
        // starts: its start runs in this same turn of promise callbacks and would hold them back.
        await new Promise<void>((resolve) => setImmediate(resolve));
        return;
      }
      this.finish(held, result, startedAt);
      // The reply goes out (the client writes on the next tick) before the next job here starts:
      // that job's start (checks, spawning) would otherwise run first and hold the reply back.
      await new Promise<void>((resolve) => setImmediate(resolve));
    });
  }

  private finish(held: Held, result: JobResult, startedAt: number): void {
    const { job } = held;
    this.held.delete(this.keyOf(job));
    // Only the wait for a slot: loading the pipeline is part of what dispatching costs.
    const queuedMs = startedAt - held.askedAt;
    if (result.kind === 'done') {
      this.reply(job, {
        kind: 'done',
        run: job.run,
        job: job.job,
        attempt: job.attempt,
        fingerprint: job.fingerprint,
        key: result.key,
        outputs: result.outputs,
        queuedMs,
        runMs: result.runMs,
        idleMs: held.idleMs,
        how: result.how,
      });
    } else if (result.code === 'interrupted') {
      // Stopped by a second SIGTERM: another worker runs it.
      this.reply(job, { kind: 'back', run: job.run, job: job.job, attempt: job.attempt });
    } else {
      this.reply(job, {
        kind: 'failed',
        run: job.run,
        job: job.job,
        attempt: job.attempt,
        code: result.code,
        reason: result.reason.slice(0, 4000),
        attempts: result.attempts,
      });
    }
    // After the reply, which the coordinator waits for; this only lets a job come.
    this.slotFreed();
    this.options.onEvent({ kind: 'finished', job, result, ms: Date.now() - startedAt });
    if (this.held.size === 0) this.idle?.();
  }

  private handBack(held: Held): void {
    this.held.delete(this.keyOf(held.job));
    this.countFree();
    this.reply(held.job, { kind: 'back', run: held.job.run, job: held.job.job, attempt: held.job.attempt });
    this.options.onEvent({ kind: 'handed-back', job: held.job });
  }

  /** One beat per run for every job held, at a third of its lease (and at once after a reconnect). */
  private beatAll(now: boolean): void {
    const byRun = new Map<string, { jobs: string[]; leaseMs: number; any: Job }>();
    for (const h of this.held.values()) {
      const entry = byRun.get(h.job.run) ?? { jobs: [], leaseMs: h.job.leaseMs, any: h.job };
      entry.jobs.push(h.job.job);
      entry.leaseMs = Math.min(entry.leaseMs, h.job.leaseMs);
      byRun.set(h.job.run, entry);
    }
    const at = Date.now();
    for (const [run, { jobs, leaseMs, any }] of byRun) {
      if (!now && at - (this.lastBeat.get(run) ?? 0) < leaseMs / 3) continue;
      this.lastBeat.set(run, at);
      this.reply(any, { kind: 'beat', run, jobs });
    }
  }
}

function failure(error: unknown): JobResult {
  return { kind: 'failed', code: 'internal-error', reason: `internal error: ${(error as Error).stack ?? String(error)}`, attempts: 0 };
}
