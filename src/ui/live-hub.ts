// Everything the dashboard's pages learn live goes through here: run events (from the watch
// daemon's bus in-process, or tailed from events.jsonl) and "this changed" notices (jobs, files).
// Each message gets a rising sequence number and stays in a ring buffer, so a client that lost its
// connection resumes from its last number with nothing lost or repeated.
import type { RunEvent } from '../engine/types/events.ts';
import type { EventSink } from '../engine/events/bus.ts';

export type LiveTopic = 'jobs' | 'massgen' | 'refine' | 'runs' | 'pipelines';

export type LiveMessage = { kind: 'run-event'; event: RunEvent } | { kind: 'changed'; topic: LiveTopic; detail?: string };

export type LiveEnvelope = LiveMessage & { seq: number };

export type LiveListener = (message: LiveEnvelope) => void;

export class LiveHub {
  private readonly buffer: LiveEnvelope[] = [];
  private readonly listeners = new Set<LiveListener>();
  private last = 0;
  private readonly behind = new Set<object>();
  private waiting: Array<() => void> = [];

  constructor(private readonly capacity = 20_000) {}

  /** The number of the newest message (0: none yet). A snapshot taken now is current up to it. */
  get seq(): number {
    return this.last;
  }

  publish(message: LiveMessage): LiveEnvelope {
    this.last += 1;
    const envelope = { ...message, seq: this.last } as LiveEnvelope;
    this.buffer.push(envelope);
    if (this.buffer.length > this.capacity) this.buffer.splice(0, this.buffer.length - this.capacity);
    for (const listener of this.listeners) {
      try {
        listener(envelope);
      } catch {
        this.listeners.delete(listener);
      }
    }
    return envelope;
  }

  /** For an EventBus: every run event of the runs it is subscribed to. */
  readonly sink: EventSink = (event) => {
    this.publish({ kind: 'run-event', event });
  };

  /** Messages after `seq`, or undefined when some of them are no longer kept (the client must reload). */
  since(seq: number): LiveEnvelope[] | undefined {
    if (seq >= this.last) return [];
    const oldest = this.buffer[0]?.seq ?? this.last + 1;
    if (seq + 1 < oldest) return undefined;
    return this.buffer.slice(seq + 1 - oldest);
  }

  /**
   * A client says whether it is behind (more queued for it than it should have). A producer that
   * can wait (the tailer of events.jsonl) waits between chunks for none to be: a reading client
   * keeps up, and one that stopped reading is dropped by its stream, which ends its pressure.
   */
  pressure(client: object, behind: boolean): void {
    if (behind) {
      this.behind.add(client);
      return;
    }
    if (!this.behind.delete(client) || this.behind.size > 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resume of waiting) resume();
  }

  /** Resolves when no client is behind. */
  room(): Promise<void> {
    if (this.behind.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  subscribe(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
