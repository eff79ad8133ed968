import { randomBytes } from 'node:crypto';
import { MqttConnection } from '../mqtt/client.ts';
import type { BrokerConfig } from '../mqtt/broker-config.ts';
import type { AuditLog } from './audit-log.ts';
import { withJobLogin } from './event-auth.ts';
import { decodePayload, type DecodeResult } from './event-payload.ts';
import { eventsTopic } from './paths.ts';
import { isTerminalStatus } from './record-codec.ts';
import { isoSeconds, type JobRegistry } from './registry.ts';
import { clientPrefix } from './publisher.ts';
import type { JobEventPayload, JobOutcomeKind, JobRecord } from './types.ts';

export type WatchDiagnostic =
  | { kind: 'dropped'; reason: Exclude<DecodeResult, { ok: true }>['reason'] | 'stale'; message: string; seq?: number; event?: string }
  | { kind: 'duplicate'; seq: number; event: string }
  | { kind: 'out-of-order'; seq: number; highest: number }
  | { kind: 'offline' }
  | { kind: 'reconnected'; sessionPresent: boolean };

export interface WatchOutcome {
  kind: JobOutcomeKind;
  /** 'event': a terminal event arrived; 'registry': the record was already terminal; 'timer': a timeout fired. */
  via: 'event' | 'registry' | 'timer';
  reason: string;
  terminal?: JobEventPayload;
  /** Accepted events in arrival order. */
  events: JobEventPayload[];
}

export interface WatchOptions {
  registry: JobRegistry;
  audit?: AuditLog;
  jobId: string;
  broker: BrokerConfig;
  env: NodeJS.ProcessEnv;
  /** Total budget from subscribe time. */
  timeoutMs: number;
  /** Fires when no new event arrived for this long (since subscribe, then since the last event). */
  idleTimeoutMs: number;
  /** Events with seq <= afterSeq belong to an earlier phase of the job and are dropped. */
  afterSeq?: number;
  signal?: AbortSignal;
  onEvent?: (payload: JobEventPayload) => void;
  onDiagnostic?: (diagnostic: WatchDiagnostic) => void;
}

/**
 * The subscriber for one job: connected (persistent session, QoS 1) and subscribed before `start`
 * resolves, so the agent may be started right after. The first terminal event wins.
 */
export class JobWatch {
  readonly result: Promise<WatchOutcome>;
  private settle!: (outcome: WatchOutcome) => void;
  private done = false;
  private readonly seen = new Set<number>();
  private highest = 0;
  private readonly events: JobEventPayload[] = [];
  private totalTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();
  /** Events dropped so far and why the last one was: a timeout names them, so a rejection never passes for silence. */
  private dropped = { count: 0, last: '' };
  private connection: MqttConnection | undefined;
  private record!: JobRecord;
  private tornDown: Promise<void> = Promise.resolve();

  private constructor(private readonly options: WatchOptions) {
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  static async start(options: WatchOptions): Promise<JobWatch> {
    const watch = new JobWatch(options);
    await watch.open();
    return watch;
  }

  /** Stops listening and disconnects; the result resolves (as a timeout) if nothing ended the job yet. */
  async close(): Promise<void> {
    this.finish({ kind: 'timeout', via: 'timer', reason: 'stopped before the job ended', events: this.events });
    await this.result;
    await this.tornDown;
  }

  private async open(): Promise<void> {
    const { options } = this;
    this.record = await options.registry.get(options.jobId);
    const extras = await options.registry.getExtras(options.jobId);
    const topic = eventsTopic(this.record.topic_prefix);
    const connection = await MqttConnection.open(withJobLogin(options.broker, this.record, extras), {
      clientId: `${clientPrefix(options.env)}-sub-${options.jobId}-${randomBytes(3).toString('hex')}`,
      clean: false,
      connectTimeoutMs: Math.min(options.timeoutMs, 15_000),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    this.connection = connection;
    connection.on('message', (message) => {
      if (message.topic === topic) this.receive(message.payload);
    });
    connection.on('offline', () => options.onDiagnostic?.({ kind: 'offline' }));
    connection.on('reconnected', ({ sessionPresent }) => {
      options.onDiagnostic?.({ kind: 'reconnected', sessionPresent });
      // Without the old session, events sent while we were away are gone: ask the registry.
      if (!sessionPresent) void this.checkRegistry();
    });
    connection.on('error', () => undefined);
    try {
      await connection.subscribe([topic], 1);
    } catch (error) {
      await connection.close(true);
      throw error;
    }
    this.totalTimer = setTimeout(
      () => this.timeout(`no terminal event within the total timeout of ${seconds(options.timeoutMs)}`),
      options.timeoutMs,
    );
    this.armIdle();
    options.signal?.addEventListener(
      'abort',
      () => this.finish({ kind: 'timeout', via: 'timer', reason: 'interrupted', events: this.events }),
      {
        once: true,
      },
    );
    this.tornDown = this.result.then(() => this.teardown(topic));
    await this.checkRegistry();
  }

  private async checkRegistry(): Promise<void> {
    let record: JobRecord;
    try {
      record = await this.options.registry.get(this.options.jobId);
    } catch {
      return;
    }
    if (isTerminalStatus(record.status) && record.last_seq > (this.options.afterSeq ?? 0)) {
      this.finish({
        kind: record.status === 'completed' ? 'completed' : 'error',
        via: 'registry',
        reason: `the registry record says '${record.status}'`,
        events: this.events,
      });
    }
  }

  private receive(raw: Buffer): void {
    if (this.done) return;
    const receivedAt = new Date();
    const decoded = decodePayload(raw, this.options.jobId, this.record.auth_token);
    if (!decoded.ok) {
      const { ok: _ok, ...dropped } = decoded;
      this.drop({ kind: 'dropped', ...dropped });
      return;
    }
    const payload = decoded.payload;
    if (payload.seq <= (this.options.afterSeq ?? 0)) {
      this.drop({
        kind: 'dropped',
        reason: 'stale',
        message: `seq ${payload.seq} belongs to an earlier phase`,
        seq: payload.seq,
        event: payload.event,
      });
      return;
    }
    if (this.seen.has(payload.seq)) {
      this.drop({ kind: 'duplicate', seq: payload.seq, event: payload.event });
      return;
    }
    this.seen.add(payload.seq);
    if (payload.seq < this.highest) this.options.onDiagnostic?.({ kind: 'out-of-order', seq: payload.seq, highest: this.highest });
    this.highest = Math.max(this.highest, payload.seq);
    this.events.push(payload);
    this.audit({ ...payload, source: 'mqtt', received_at: receivedAt.toISOString() });
    this.options.onEvent?.(payload);
    this.armIdle();
    if (payload.event === 'completed' || payload.event === 'error') {
      this.finish({ kind: payload.event, via: 'event', reason: payload.detail, terminal: payload, events: this.events });
    }
  }

  private drop(diagnostic: WatchDiagnostic): void {
    this.options.onDiagnostic?.(diagnostic);
    const detail =
      diagnostic.kind === 'duplicate'
        ? `duplicate seq ${diagnostic.seq}`
        : 'message' in diagnostic
          ? `${diagnostic.reason}: ${diagnostic.message}`
          : diagnostic.kind;
    this.dropped = {
      count: this.dropped.count + 1,
      last: 'seq' in diagnostic && diagnostic.seq !== undefined ? `seq ${diagnostic.seq} ${detail}` : detail,
    };
    this.audit({
      job_id: this.options.jobId,
      event: 'dropped',
      timestamp: isoSeconds(new Date()),
      source: 'refinery',
      detail,
      ...('seq' in diagnostic && diagnostic.seq !== undefined ? { seq: diagnostic.seq } : {}),
    });
  }

  private audit(line: Parameters<AuditLog['append']>[0]): void {
    const audit = this.options.audit;
    if (!audit) return;
    this.writes = this.writes.then(() => audit.append(line)).catch(() => undefined);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    const ms = this.options.idleTimeoutMs;
    this.idleTimer = setTimeout(() => this.timeout(`no event for ${seconds(ms)} (idle timeout)`), ms);
  }

  private timeout(reason: string): void {
    const { count, last } = this.dropped;
    const drops = count === 0 ? '' : `; ${count === 1 ? '1 event was' : `${count} events were`} dropped, the last: ${last}`;
    this.finish({ kind: 'timeout', via: 'timer', reason: `${reason}${drops}`, events: this.events });
  }

  private finish(outcome: WatchOutcome): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    void this.writes.then(() => this.settle(outcome));
  }

  private async teardown(topic: string): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    try {
      await Promise.race([connection.unsubscribe([topic]), new Promise((resolve) => setTimeout(resolve, 1000))]);
    } catch {
      // the session ends with the connection anyway
    }
    await connection.close(true);
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
