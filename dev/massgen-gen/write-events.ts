// events.jsonl (massgen/events.py EventEmitter: json.dumps(..., ensure_ascii=False) per line),
// optionally padded with streamed text/thinking fragments up to about `targetBytes`.
// Padding is written in bounded chunks straight to the file descriptor.
import { closeSync, openSync, writeSync } from 'node:fs';
import { isoLocal, isoSecondPrefix, type Micros } from './clock.ts';
import type { JsonlEvent } from './model.ts';
import type { Rng } from './prng.ts';
import { pyJsonLine, pyString } from './py-json.ts';
import { TEXT_FRAGMENTS, THINKING_FRAGMENTS } from './texts.ts';

const CHUNK_CHARS = 4 * 1024 * 1024;

export function eventLine(e: JsonlEvent): string {
  return `${pyJsonLine({ timestamp: isoLocal(e.at), event_type: e.type, agent_id: e.agent, round_number: e.round, data: e.data })}\n`;
}

class ChunkedWriter {
  private buf = '';
  bytes = 0;
  constructor(private readonly fd: number) {}
  push(text: string): void {
    this.buf += text;
    if (this.buf.length >= CHUNK_CHARS) this.flush();
  }
  flush(): void {
    if (this.buf.length === 0) return;
    const data = Buffer.from(this.buf, 'utf8');
    let off = 0;
    while (off < data.length) off += writeSync(this.fd, data, off, data.length - off);
    this.bytes += data.length;
    this.buf = '';
  }
}

class IsoClock {
  private second = -1;
  private prefix = '';
  format(us: Micros): string {
    const s = Math.floor(us / 1e6);
    if (s !== this.second) {
      this.second = s;
      this.prefix = isoSecondPrefix(new Date(s * 1000));
    }
    return `${this.prefix}.${String(us - s * 1e6).padStart(6, '0')}`;
  }
}

interface Fragment {
  json: string;
  bytes: number;
}

const fragments = (items: readonly string[]): Fragment[] =>
  items.map((t) => {
    const json = pyString(t, false);
    return { json, bytes: Buffer.byteLength(json) };
  });

/** Writes fragment lines after `e` until `quota` bytes; returns the bytes written (overshoot < one line). */
function padAfter(w: ChunkedWriter, e: JsonlEvent, nextAt: Micros, quota: number, rng: Rng, clock: IsoClock): number {
  const kind = e.padKind ?? 'text';
  const frags = fragments(kind === 'thinking' ? THINKING_FRAGMENTS : TEXT_FRAGMENTS);
  const head = `", "event_type": "${kind}", "agent_id": ${pyString(e.agent ?? '', false)}, "round_number": ${e.round}, "data": {"content": `;
  const tail = kind === 'thinking' ? ', "done": false}}\n' : '}}\n';
  const fixed = '{"timestamp": "'.length + 26 + Buffer.byteLength(head) + tail.length;
  const avg = fixed + frags.reduce((n, fr) => n + fr.bytes, 0) / frags.length;
  const estimate = Math.max(1, Math.ceil(quota / avg));
  const window = Math.max(0, nextAt - e.at - 1);
  let written = 0;
  for (let j = 1; written < quota; j++) {
    const fr = frags[Math.floor(rng.next() * frags.length)] ?? frags[0];
    if (!fr) return written;
    const at = e.at + Math.min(window, Math.floor((j * window) / (estimate + 1)));
    w.push(`{"timestamp": "${clock.format(at)}${head}${fr.json}${tail}`);
    written += fixed + fr.bytes;
  }
  return written;
}

/** Writes events.jsonl; returns the number of bytes written. */
export function writeEventsJsonl(path: string, events: JsonlEvent[], targetBytes: number | null, rng: Rng): number {
  const lines = events.map(eventLine);
  const base = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
  const points = events.map((e, i) => (e.padKind ? i : -1)).filter((i) => i >= 0);
  const extra = targetBytes !== null && points.length > 0 ? Math.max(0, targetBytes - base) : 0;
  const fd = openSync(path, 'w');
  try {
    const w = new ChunkedWriter(fd);
    const clock = new IsoClock();
    let padded = 0;
    let p = 0;
    lines.forEach((line, i) => {
      w.push(line);
      if (extra === 0 || points[p] !== i) return;
      p++;
      // cumulative share, so one point's overshoot is taken off the next one's quota
      const quota = Math.floor((extra * p) / points.length) - padded;
      const e = events[i];
      if (e && quota > 0) padded += padAfter(w, e, events[i + 1]?.at ?? e.at + 1_000_000, quota, rng, clock);
    });
    w.flush();
    return w.bytes;
  } finally {
    closeSync(fd);
  }
}
