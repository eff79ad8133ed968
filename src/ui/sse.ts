// The event stream: Server-Sent Events over the dashboard's own HTTP server. The page gets a
// snapshot from the JSON API (which names the sequence number it is current to), then opens this
// stream from that number; the browser's EventSource reconnects by itself and sends the last id it
// saw (Last-Event-ID), so a dropped connection resumes exactly where it stopped.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LiveEnvelope, LiveHub } from './live-hub.ts';

/** A client this far behind (a stalled tab) is dropped; it reconnects and resumes or reloads. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
const HEARTBEAT_MS = 15_000;

function frame(message: LiveEnvelope): string {
  return `id: ${message.seq}\nevent: ${message.kind}\ndata: ${JSON.stringify(message)}\n\n`;
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
  let pending: string[] = [];
  let scheduled = false;
  let closed = false;
  const flush = (): void => {
    scheduled = false;
    if (closed || pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) close();
  };
  // Bursts (a thousand stages settling at once) go out in one write per turn of the event loop.
  const send = (text: string): void => {
    pending.push(text);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const unsubscribe = hub.subscribe((m) => send(frame(m)));
  const heartbeat = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(heartbeat);
    res.end();
  };
  req.on('close', close);
  send('retry: 1000\n\n');
  if (since === undefined) {
    send(`id: ${hub.seq}\nevent: hello\ndata: ${JSON.stringify({ seq: hub.seq })}\n\n`);
    return;
  }
  // A number past the newest is from another start of the server: what it had is gone.
  const missed = since > hub.seq ? undefined : hub.since(since);
  if (missed === undefined) send(`id: ${hub.seq}\nevent: reset\ndata: ${JSON.stringify({ seq: hub.seq })}\n\n`);
  else for (const m of missed) send(frame(m));
}
