/// <reference lib="dom" />
// The live stream (Server-Sent Events). Every message has a rising `seq`: the client ignores what it
// has already seen and, after any break, reconnects from the last one it has, for as long as it
// takes, showing a banner meanwhile. When the server no longer has what was missed it says
// `reset` and the current view reloads; a tab too slow to keep up is sent `reload` and dropped, and
// does the same.

export interface RunEvent {
  type: string;
  runId: string;
  pipeline: string;
  time: string;
  stage?: string;
  status?: string;
  durationMs?: number;
  message?: string;
  stream?: string;
  fraction?: number;
  loop?: string;
  [key: string]: unknown;
}

export type LiveMessage = ({ kind: 'run-event'; event: RunEvent } | { kind: 'changed'; topic: string; detail?: string }) & { seq: number };

type Listener = (message: LiveMessage) => void;

export class LiveClient {
  private source: EventSource | undefined;
  private last: number;
  private readonly listeners = new Set<Listener>();
  private readonly resetListeners = new Set<() => void>();
  private retryMs = 1000;
  private timer: number | undefined;

  constructor(
    since: number,
    private readonly banner: (text: string | null) => void,
  ) {
    this.last = since;
    this.connect();
  }

  get seq(): number {
    return this.last;
  }

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onReset(listener: () => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  private connect(): void {
    const source = new EventSource(`/api/events?since=${this.last}`);
    this.source = source;
    source.addEventListener('open', () => {
      this.retryMs = 1000;
      this.banner(null);
    });
    const deliver = (e: MessageEvent<string>): void => {
      const message = JSON.parse(e.data) as LiveMessage;
      if (message.seq <= this.last) return;
      this.last = message.seq;
      for (const l of this.listeners) l(message);
    };
    source.addEventListener('run-event', deliver as EventListener);
    source.addEventListener('changed', deliver as EventListener);
    const reset = ((e: MessageEvent<string>) => {
      this.last = (JSON.parse(e.data) as { seq: number }).seq;
      for (const l of this.resetListeners) l();
    }) as EventListener;
    source.addEventListener('reset', reset);
    // This tab fell too far behind (frozen, or the machine asleep): the server dropped it. The view
    // reloads and the stream reconnects by itself from the number `reload` carried.
    source.addEventListener('reload', reset);
    source.addEventListener('error', () => {
      // EventSource retries by itself while CONNECTING; once CLOSED (the server refused) we do, with backoff.
      if (source.readyState === EventSource.CONNECTING) {
        this.banner('Live updates interrupted: reconnecting…');
        return;
      }
      source.close();
      const wait = this.retryMs;
      this.retryMs = Math.min(30_000, this.retryMs * 2);
      this.banner(`Live updates lost: retrying in ${Math.round(wait / 1000)} s…`);
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => this.connect(), wait);
    });
  }

  /** For tests and the help page: drop the connection (it comes back by itself). */
  drop(): void {
    this.source?.close();
    window.clearTimeout(this.timer);
    this.banner('Live updates interrupted: reconnecting…');
    this.timer = window.setTimeout(() => this.connect(), 200);
  }
}
