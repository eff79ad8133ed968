// The event stream: Server-Sent Events over the dashboard's own HTTP server. The page gets a
// snapshot from the JSON API (which names the sequence number it is current to), then opens this
// stream from that number; the browser's EventSource reconnects by itself and sends the last id it
// saw (Last-Event-ID), so a dropped connection resumes exactly where it stopped. Each client has a
// bounded queue: one that does not read (a frozen tab) is sent `reload` and dropped, so forty of them
// during a run that logs 200,000 lines cost no more memory than one.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LiveEnvelope, LiveHub } from './live-hub.ts';

/**
 * What one client may have waiting (queued here while its socket has not drained), in characters
 * of frames (ASCII but for agent text). Past it the client is too slow for this stream: it is sent
 * `reload` and dropped, never buffered further.
 */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** The most handed to the socket in one write: a stalled client holds at most this much of its own. */
const WRITE_BYTES = 256 * 1024;
/** Past this much queued a client is behind: the tailer waits for it (see LiveHub.pressure). */
const BEHIND_BYTES = 1024 * 1024;
/** A socket that takes nothing of what it was given for this long: the client stopped reading. */
export const STALL_MS = 10_000;
const HEARTBEAT_MS = 15_000;
/** A dropped client's socket that never takes the last bytes is destroyed after this long. */
const DROP_GRACE_MS = 60_000;

/** One frame per message, made once and shared by every client (a run's 200,000 log lines, 40 tabs). */
const frames = new WeakMap<LiveEnvelope, string>();

function frame(message: LiveEnvelope): string {
  let text = frames.get(message);
  if (text === undefined) {
    text = `id: ${message.seq}\nevent: ${message.kind}\ndata: ${JSON.stringify(message)}\n\n`;
    frames.set(message, text);
  }
  return text;
}

function control(event: 'hello' | 'reset' | 'reload', seq: number, extra: Record<string, unknown> = {}): string {
  return `id: ${seq}\nevent: ${event}\ndata: ${JSON.stringify({ seq, ...extra })}\n\n`;
}

/** Where the client wants to resume: Last-Event-ID (a reconnect), else `?since=`; undefined for a fresh start. */
export function resumePoint(req: IncomingMessage, url: URL): number | undefined {
  const header = req.headers['last-event-id'];
  const raw = typeof header === 'string' && header !== '' ? header : url.searchParams.get('since');
  if (raw === null || raw === undefined || !/^\d{1,15}$/.test(raw)) return undefined;
  return Number(raw);
}

export function serveEventStream(
  req: IncomingMessage,
  res: ServerResponse,
  hub: LiveHub,
  since: number | undefined,
  headers: Record<string, string>,
): void {
  res.writeHead(200, {
    ...headers,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  // Frames are shared by every client (and the hub): a queue holds references, not copies. What is
  // copied is one write at a time, at most WRITE_BYTES, and nothing more until the socket took it.
  let queue: string[] = [];
  let head = 0;
  let queued = 0;
  let scheduled = false;
  let draining = false;
  let closed = false;
  let stalled: NodeJS.Timeout | undefined;
  const report = (): void => hub.pressure(res, !closed && queued > BEHIND_BYTES);
  const flush = (): void => {
    scheduled = false;
    while (!closed && !draining && head < queue.length) {
      let size = 0;
      const from = head;
      while (head < queue.length && (size === 0 || size < WRITE_BYTES)) size += (queue[head++] as string).length;
      const text = queue.slice(from, head).join('');
      queued -= size;
      if (head === queue.length) {
        queue = [];
        head = 0;
      }
      if (!res.write(text)) {
        draining = true;
        stalled = setTimeout(() => drop(`this client read nothing for ${STALL_MS / 1000} s`), STALL_MS);
        stalled.unref();
        res.once('drain', () => {
          clearTimeout(stalled);
          draining = false;
          flush();
        });
      }
    }
    report();
  };
  const send = (text: string): void => {
    if (closed) return;
    queued += text.length;
    if (queued > MAX_QUEUED_BYTES) return drop(`this client fell over ${MAX_QUEUED_BYTES} characters behind`);
    queue.push(text);
    if (queued > BEHIND_BYTES) report();
    if (!scheduled && !draining) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const stop = (): void => {
    closed = true;
    queue = [];
    head = 0;
    queued = 0;
    clearTimeout(stalled);
    report();
    unsubscribe();
    clearInterval(heartbeat);
  };
  // Too far behind: what it missed is dropped here, and `reload` (after whatever the socket still
  // holds) tells it to fetch a fresh snapshot and reconnect from the newest number.
  const drop = (reason: string): void => {
    if (closed) return;
    stop();
    res.end(control('reload', hub.seq, { reason }));
    const grace = setTimeout(() => res.destroy(), DROP_GRACE_MS);
    grace.unref();
    res.once('close', () => clearTimeout(grace));
  };
  const unsubscribe = hub.subscribe((m) => send(frame(m)));
  const heartbeat = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
  req.on('close', () => {
    if (closed) return;
    stop();
    res.end();
  });
  send('retry: 1000\n\n');
  if (since === undefined) {
    send(control('hello', hub.seq));
    return;
  }
  // A number past the newest is from another start of the server: what it had is gone. So is more
  // than one queue's worth: the client reloads its view rather than replaying it.
  const missed = since > hub.seq ? undefined : hub.since(since);
  const fits = missed !== undefined && missed.reduce((n, m) => n + frame(m).length, 0) <= MAX_QUEUED_BYTES / 2;
  if (!fits) send(control('reset', hub.seq));
  else for (const m of missed) send(frame(m));
}
