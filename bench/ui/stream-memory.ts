// The dashboard's memory under a chatty run and clients that never read: `refinery ui` serving a
// project, 40 event-stream clients that open the stream and then stop reading (frozen tabs), and a
// `refinery run` whose one stage prints 200,000 lines (each a stage-log event the dashboard tails
// from events.jsonl). Measured: the dashboard's peak RSS (VmHWM from /proc, the kernel's own high-water
// mark), the slowest /api/overview answer while the run's journal is taken in, and how many of the
// stalled clients were sent `reload` and dropped. Target: peak RSS under 300 MB.
// Usage: npx tsx bench/ui/stream-memory.ts [--lines 200000] [--clients 40]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROOT = path.join(REPO, 'bench', '.work', 'ui-stream');
const CLI = path.join(REPO, 'bin', 'refinery.js');
const TARGET_MB = 300;

const { values } = parseArgs({ options: { lines: { type: 'string', default: '200000' }, clients: { type: 'string', default: '40' } } });
const LINES = Number(values.lines);
const CLIENTS = Number(values.clients);

function project(): void {
  rmSync(ROOT, { recursive: true, force: true });
  mkdirSync(path.join(ROOT, 'pipelines'), { recursive: true });
  mkdirSync(path.join(ROOT, 'node_modules'), { recursive: true });
  symlinkSync(REPO, path.join(ROOT, 'node_modules', 'refinery'), 'dir');
  writeFileSync(path.join(ROOT, 'package.json'), '{ "type": "module", "private": true }\n');
  writeFileSync(
    path.join(ROOT, 'pipelines', 'chatty.yaml'),
    `pipeline: chatty
stages:
  talk:
    run: "seq 1 ${LINES} | awk '{ print \\"step \\" $1 \\" of the chatty stage: lorem ipsum dolor sit amet, consectetur adipiscing\\" }'; echo done > \${outputs.o}"
    outputs: { o: out/done.txt }
`,
  );
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function startUi(): Promise<{ pid: number; port: number; cookie: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, 'ui'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, CI: 'true' },
  });
  const url = await new Promise<URL>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /(http:\/\/\S+\/\?token=\S+)/.exec(text);
      if (m) resolve(new URL(m[1] as string));
    });
    child.on('close', (code) => reject(new Error(`refinery ui exited with ${code}`)));
  });
  return {
    pid: child.pid as number,
    port: Number(url.port),
    cookie: `refinery-ui-${url.port}=${url.searchParams.get('token')}`,
    stop: () =>
      new Promise((resolve) => {
        child.on('close', () => resolve());
        child.kill('SIGINT');
      }),
  };
}

interface Stalled {
  /** The server closed the connection while the client was not reading (dropped past its grace). */
  closed: boolean;
  rest: () => Promise<string>;
}

/** A client that takes the stream's first frame and never reads again; `rest` reads what the server still sent. */
function stalledClient(port: number, cookie: string): Promise<Stalled> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const client = { closed: false } as Stalled;
    socket.setEncoding('utf8');
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET') client.closed = true;
      else reject(error);
    });
    socket.on('close', () => {
      client.closed = true;
    });
    socket.write(`GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\n\r\n`);
    let first = '';
    const onData = (d: string): void => {
      first += d;
      if (!first.includes('event: hello')) return;
      socket.off('data', onData);
      socket.pause();
      resolve(
        Object.assign(client, {
          rest: () =>
            new Promise((done) => {
              let more = '';
              socket.on('data', (c: string) => (more += c));
              socket.on('end', () => done(more));
              socket.on('close', () => done(more));
              socket.resume();
            }),
        }),
      );
    };
    socket.on('data', onData);
  });
}

let lastSeq = 0;

function overviewMs(port: number, cookie: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/api/overview', agent: false, headers: { Cookie: cookie } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          lastSeq = (JSON.parse(body) as { seq: number }).seq;
          resolve(performance.now() - started);
        });
      })
      .on('error', reject);
  });
}

async function main(): Promise<void> {
  project();
  const ui = await startUi();
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (!stopped) await ui.stop();
    stopped = true;
  };
  try {
    const stalled = await Promise.all(Array.from({ length: CLIENTS }, () => stalledClient(ui.port, ui.cookie)));
    const before = peakRssMb(ui.pid);
    const run = spawn(process.execPath, [CLI, 'run', 'chatty'], { cwd: ROOT, stdio: 'ignore', env: { ...process.env, CI: 'true' } });
    const ran = new Promise<number | null>((resolve) => run.on('close', resolve));
    let done = false;
    let slowest = 0;
    let answered = 0;
    void ran.then(() => {
      done = true;
    });
    while (!done) {
      slowest = Math.max(slowest, await overviewMs(ui.port, ui.cookie));
      answered += 1;
    }
    const code = await ran;
    if (code !== 0) throw new Error(`refinery run exited with ${code}`);
    const runs = path.join(ROOT, '.refinery', 'runs');
    const runId = existsSync(runs) ? readdirSync(runs)[0] : undefined;
    if (!runId) throw new Error('the run left no events.jsonl');
    const events = readFileSync(path.join(runs, runId, 'events.jsonl'), 'utf8').split('\n').length - 1;
    // The run is over; the dashboard may still be taking its journal in: ask until it has published all of it.
    const tailStarted = performance.now();
    while (lastSeq < events) {
      slowest = Math.max(slowest, await overviewMs(ui.port, ui.cookie));
      answered += 1;
      if (performance.now() - tailStarted > 300_000) throw new Error(`the dashboard published ${lastSeq} of ${events} events in 300 s`);
    }
    const tailMs = performance.now() - tailStarted;
    const peak = peakRssMb(ui.pid);
    // What each stalled client was still sent, up to the server closing it (dropped, or stopped now).
    // Each stalled client now reads what the server still holds for it: a dropped one ends with
    // `reload`, then the server's close (or was closed outright past its grace); one never dropped
    // would still be open when the server stops.
    const closedEarly = stalled.filter((s) => s.closed).length;
    const reads = stalled.map((s) => (s.closed ? Promise.resolve('') : s.rest()));
    const settled = await Promise.race([
      Promise.all(reads),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000).unref()),
    ]);
    const reloaded = (settled ?? []).filter((r) => r.includes('event: reload')).length;
    await stop();
    process.stdout.write(
      `refinery ui, ${CLIENTS} stalled event-stream clients, a run logging ${LINES} lines:\n` +
        `  peak RSS ${peak.toFixed(0)} MB (${before.toFixed(0)} MB before the run; target < ${TARGET_MB} MB) ${peak < TARGET_MB ? '✓' : '✗'}\n` +
        `  /api/overview while the run's ${events} events were taken in: ${answered} answers, slowest ${slowest.toFixed(0)} ms; all published ${(tailMs / 1000).toFixed(1)} s after the run ended\n` +
        `  stalled clients dropped: ${reloaded + closedEarly} of ${CLIENTS} (${reloaded} read their reload; ${closedEarly} closed after the grace before reading it)\n`,
    );
    if (peak >= TARGET_MB) process.exitCode = 1;
  } finally {
    await stop();
  }
}

await main();
