// The dashboard under a run that logs a great deal: a run folder appears with a large events.jsonl
// (60,000 log lines, as a chatty stage writes them). A client that never reads its event stream is
// sent `reload` and dropped, never buffered; one that reads gets every event; /api answers while
// the journal is being taken in, and the run's page and its log tail are served from it.
import { appendFileSync, mkdirSync, renameSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempProject, type TempProject } from '../../helpers/project.ts';
import { UiProcess } from './ui-process.ts';

const RUN_ID = '20250101T000000000Z-chatty';
const LINES = 60_000;

let project: TempProject;
let ui: UiProcess;

beforeAll(async () => {
  project = tempProject();
  ui = new UiProcess(['ui'], project.root);
  await ui.ready;
});

afterAll(async () => {
  await ui?.stop();
  project?.cleanup();
});

/** The run's events.jsonl, written aside and then moved in whole: the run folder appears at once. */
function chattyRun(): { moveIn: () => void } {
  const dir = project.path(`.refinery/staging-${RUN_ID}`);
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/events.jsonl`;
  const base = { runId: RUN_ID, pipeline: 'chatty', time: '2025-01-01T00:00:00.000Z' };
  const line = (e: Record<string, unknown>): string => `${JSON.stringify({ ...base, ...e })}\n`;
  appendFileSync(
    file,
    line({ type: 'run-start', stages: 1, params: {}, concurrency: 1 }) + line({ type: 'stage-start', stage: 's', attempt: 1 }),
  );
  for (let from = 0; from < LINES; from += 10_000) {
    let text = '';
    for (let i = from; i < Math.min(LINES, from + 10_000); i += 1)
      text += line({ type: 'stage-log', stage: 's', stream: 'stdout', message: `line ${i} ${'x'.repeat(120)}` });
    appendFileSync(file, text);
  }
  appendFileSync(
    file,
    line({ type: 'stage-end', stage: 's', status: 'succeeded', durationMs: 5, attempts: 1 }) +
      line({ type: 'run-end', status: 'succeeded', durationMs: 9 }),
  );
  return {
    moveIn: () => {
      mkdirSync(project.path('.refinery/runs'), { recursive: true });
      renameSync(dir, project.path(`.refinery/runs/${RUN_ID}`));
    },
  };
}

interface Reader {
  /** Resolves with the seq of this run's first event and of its run-end, once run-end arrives. */
  ended: Promise<{ first: number; end: number }>;
  frames: number;
  reloads: number;
}

/** A client that reads the event stream as fast as it comes, counting frames (no per-frame copying). */
function readingClient(): Reader {
  const url = new URL(ui.base);
  const reader = { frames: 0, reloads: 0 } as Reader;
  reader.ended = new Promise((resolve, reject) => {
    let first = 0;
    let tail = '';
    const req = httpRequest({ host: url.hostname, port: url.port, path: '/api/events', headers: { Cookie: ui.cookie } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const text = tail + chunk;
        reader.frames += chunk.split('\n\n').length - 1;
        reader.reloads += text.split('event: reload').length - 1;
        if (first === 0) {
          const m = new RegExp(`id: (\\d+)\\nevent: run-event\\ndata: [^\\n]*"runId":"${RUN_ID}"`).exec(text);
          if (m) first = Number(m[1]);
        }
        const end = text.includes('"type":"run-end"') ? /id: (\d+)\nevent: run-event\ndata: [^\n]*"type":"run-end"/.exec(text) : null;
        if (end) {
          req.destroy();
          resolve({ first, end: Number(end[1]) });
        }
        // Enough to find a frame's head across a chunk boundary.
        tail = text.slice(-400);
      });
      res.on('end', () => reject(new Error(`the reading client was disconnected after ${reader.frames} frames: ${tail.slice(-300)}`)));
    });
    req.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    req.end();
  });
  return reader;
}

/** A client that opens the stream, takes its first frame, and then never reads again. */
function stalledClient(): Promise<{ socket: net.Socket; rest: () => Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(ui.port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${ui.port}\r\nCookie: ${ui.cookie}\r\n\r\n`);
    const onData = (d: string): void => {
      text += d;
      if (!text.includes('event: hello')) return;
      socket.off('data', onData);
      socket.pause();
      resolve({
        socket,
        // Everything the server still sent, up to its closing the connection.
        rest: () =>
          new Promise((done) => {
            let more = '';
            socket.on('data', (chunk: string) => (more += chunk));
            socket.on('end', () => done(more));
            socket.resume();
          }),
      });
    };
    socket.on('data', onData);
  });
}

describe('refinery ui under a chatty run', () => {
  it('event stream - a stalled client is dropped with a reload event; a reading client gets everything; /api answers meanwhile', async () => {
    const run = chattyRun();
    const stalled = await stalledClient();
    const reader = readingClient();
    // The reading client is subscribed once /api/overview (sent after it) answers. A fresh connection
    // for each request: one kept alive can be closed by the server just as it is reused.
    const overview = (): ReturnType<UiProcess['request']> => ui.request('/api/overview', { auth: true, headers: { Connection: 'close' } });
    expect((await overview()).status).toBe(200);
    let done = false;
    const seqsMeanwhile: number[] = [];
    const pinging = (async () => {
      while (!done) {
        const answer = await overview();
        expect(answer.status).toBe(200);
        seqsMeanwhile.push(JSON.parse(answer.body).seq as number);
      }
    })();
    run.moveIn();
    const { first, end } = await reader.ended.finally(() => {
      done = true;
    });
    await pinging;
    expect(end - first).toBe(LINES + 3);
    expect(reader.reloads).toBe(0);
    // Answered while the journal was being taken in: between its first event and its last.
    expect(seqsMeanwhile.filter((s) => s >= first && s < end).length).toBeGreaterThan(0);

    const rest = await stalled.rest();
    // What the socket held when it stalled, not the run's 18 MB of frames.
    expect(rest.length).toBeLessThan(12 * 1024 * 1024);
    expect(rest).toMatch(/event: reload\ndata: \{"seq":\d+,"reason":"[^"]+"\}\n\n(\r\n0\r\n\r\n)?$/);
    stalled.socket.destroy();
  }, 120_000);

  it('run page - a large journal is folded once: the run, and the tail of its stage log', async () => {
    const detail = await ui.request(`/api/runs/${RUN_ID}`, { auth: true });
    expect(detail.status).toBe(200);
    expect(JSON.parse(detail.body).stages).toEqual([expect.objectContaining({ id: 's', status: 'succeeded', attempts: 1 })]);
    const logs = JSON.parse((await ui.request(`/api/runs/${RUN_ID}/logs?stage=s&tail=2`, { auth: true })).body);
    expect(logs.total).toBe(LINES);
    expect(logs.lines.map((l: { message: string }) => l.message.split(' ').slice(0, 2).join(' '))).toEqual([
      `line ${LINES - 2}`,
      `line ${LINES - 1}`,
    ]);
  });
});
