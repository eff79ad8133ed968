// The Bazel HTTP remote-cache protocol over node:http(s): GET/PUT/HEAD of `<base>/ac/<key>` and
// `<base>/cas/<sha256>`, as bazel-remote and nginx with WebDAV serve it. Every request has bounded
// time: connect, idle, and a total deadline scaled to its size (its bytes at a minimum rate, never
// under a floor), so a server that trickles a byte now and then cannot hold a run. Transient
// failures are retried with backoff and jitter, at most `concurrency` requests are in flight, and
// after a few consecutive transport failures (or one transfer past its deadline) the cache turns
// itself off for the rest of the run. Nothing here throws at its callers: a result says hit, miss,
// refused or failed, and the run goes on.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { WorkQueue } from '../executor/work-queue.ts';

export type CacheKind = 'ac' | 'cas';

export interface HttpCacheOptions {
  /** `http(s)://host[:port][/prefix]`, no credentials, no trailing slash. */
  baseUrl: string;
  /** Sent with every request (Authorization and configured headers). */
  headers: Readonly<Record<string, string>>;
  concurrency?: number;
  connectTimeoutMs?: number;
  /** No byte received or sent for this long: the request is abandoned. */
  idleTimeoutMs?: number;
  /** The least total time a request gets (action-cache entries and other small ones get this). */
  deadlineFloorMs?: number;
  /** A transfer of N bytes gets N / this many seconds in all (when over the floor). */
  minRateBytesPerSec?: number;
  attempts?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  /** Consecutive transport failures after which the cache is off for this run. */
  maxTransportFailures?: number;
}

export const DEFAULTS = {
  concurrency: 8,
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 30_000,
  deadlineFloorMs: 10_000,
  minRateBytesPerSec: 256 * 1024,
  attempts: 3,
  backoffBaseMs: 250,
  backoffCapMs: 5_000,
  maxTransportFailures: 3,
} as const;

/** Statuses worth another attempt (Bazel's and Turborepo's lists agree on these). */
const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);
const PUT_OK = new Set([200, 201, 202, 204]);
const MAX_AC_BYTES = 4 * 1024 * 1024;
/**
 * A file up to this size is uploaded from one synchronous read: a read stream's open, reads and
 * close each wait for a libuv thread and then for the event loop, which on a worker is busy
 * starting its next stage, and the action-cache entry waits for the blob.
 */
const READ_AT_ONCE_BYTES = 1024 * 1024;

export type GetResult = { kind: 'hit'; body: Buffer } | { kind: 'miss' } | { kind: 'failed'; message: string };
export type FileGetResult =
  | { kind: 'hit' }
  | { kind: 'miss' }
  | { kind: 'mismatch'; message: string }
  | { kind: 'failed'; message: string };
export type PutResult = { kind: 'stored' } | { kind: 'refused'; status: number; message: string } | { kind: 'failed'; message: string };

export type PutBody = { data: Buffer } | { file: string; size: number; sha256: string };

class TransportError extends Error {
  /** A transfer past its deadline: the server is too slow for this run, retrying would only wait longer. */
  constructor(
    message: string,
    readonly tooSlow = false,
  ) {
    super(message);
  }
}

interface RawResponse {
  status: number;
  /** The answer was larger than allowed and was not read to its end. */
  tooLarge?: number;
  body?: Buffer;
  /** For downloads to a file: what was written. */
  written?: { sha256: string; size: number };
  /** For uploads from a file: what was sent. */
  sent?: { sha256: string };
}

type ResponseMode = { kind: 'buffer'; maxBytes: number } | { kind: 'file'; file: string; maxBytes: number } | { kind: 'discard' };

function seconds(ms: number): string {
  return String(Math.round(ms / 100) / 10);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A small file's bytes when it still has the size it was hashed at; undefined to stream it (a
 * large file, or one that changed or cannot be read here: the stream meets and reports that).
 */
function readSmallFile(file: string, size: number): Buffer | undefined {
  if (size > READ_AT_ONCE_BYTES) return undefined;
  try {
    const data = readFileSync(file);
    return data.length === size ? data : undefined;
  } catch {
    return undefined;
  }
}

export class HttpCache {
  private readonly options: Required<HttpCacheOptions>;
  private readonly agent: http.Agent;
  private readonly semaphore: WorkQueue;
  private consecutiveFailures = 0;
  /** Why the cache is off for the rest of the run; undefined while it is on. */
  disabledBecause: string | undefined;
  /** Requests sent, for tests and the bench. */
  requests = 0;

  constructor(options: HttpCacheOptions) {
    this.options = { ...DEFAULTS, ...options };
    const secure = this.options.baseUrl.startsWith('https:');
    this.agent = secure
      ? new https.Agent({ keepAlive: true, maxSockets: this.options.concurrency })
      : new http.Agent({ keepAlive: true, maxSockets: this.options.concurrency });
    this.semaphore = new WorkQueue(this.options.concurrency);
  }

  /** The URL of an entry (keys are checked by the callers: 64 lowercase hex). */
  url(kind: CacheKind, key: string): string {
    return `${this.options.baseUrl}/${kind}/${key}`;
  }

  close(): void {
    this.agent.destroy();
  }

  /**
   * The total time a transfer of `bytes` gets: those bytes at the minimum rate, never under the
   * floor (a small request still pays a connection and the server's lookup).
   */
  deadlineFor(bytes: number): number {
    return Math.max(this.options.deadlineFloorMs, Math.ceil((bytes / this.options.minRateBytesPerSec) * 1000));
  }

  /** An action-cache entry or a small blob, in memory; `expectedBytes` (when known) sets its deadline. */
  async get(kind: CacheKind, key: string, maxBytes = MAX_AC_BYTES, expectedBytes = 0): Promise<GetResult> {
    const outcome = await this.send('GET', kind, key, undefined, { kind: 'buffer', maxBytes }, expectedBytes);
    if ('failed' in outcome) return { kind: 'failed', message: outcome.failed };
    const { status, body, tooLarge } = outcome.response;
    if (tooLarge !== undefined) return { kind: 'failed', message: `GET ${kind}/${key} is larger than ${tooLarge} bytes` };
    if (status === 200) return { kind: 'hit', body: body ?? Buffer.alloc(0) };
    if (status === 404 || status === 204) return { kind: 'miss' };
    return { kind: 'failed', message: `GET ${kind}/${key} answered HTTP ${status}` };
  }

  /** A blob streamed into `file` while hashed; a hash or size other than `expected` is a mismatch. */
  async getToFile(key: string, file: string, expected: { sha256: string; size: number }): Promise<FileGetResult> {
    const outcome = await this.send('GET', 'cas', key, undefined, { kind: 'file', file, maxBytes: expected.size }, expected.size);
    if ('failed' in outcome) return { kind: 'failed', message: outcome.failed };
    const { status, written } = outcome.response;
    if (status === 404 || status === 204) return { kind: 'miss' };
    if (status !== 200 || !written) return { kind: 'failed', message: `GET cas/${key} answered HTTP ${status}` };
    if (written.size !== expected.size || written.sha256 !== expected.sha256) {
      return {
        kind: 'mismatch',
        message: `blob cas/${key} holds ${written.size} bytes with sha256 ${written.sha256}, not the ${expected.size} bytes it is named by`,
      };
    }
    return { kind: 'hit' };
  }

  /** Whether the server has the entry (HEAD); undefined when it could not tell. */
  async has(kind: CacheKind, key: string): Promise<boolean | undefined> {
    const outcome = await this.send('HEAD', kind, key, undefined, { kind: 'discard' }, 0);
    if ('failed' in outcome) return undefined;
    if (outcome.response.status === 200) return true;
    if (outcome.response.status === 404) return false;
    return undefined;
  }

  async put(kind: CacheKind, key: string, body: PutBody): Promise<PutResult> {
    const outcome = await this.send('PUT', kind, key, body, { kind: 'discard' }, 'data' in body ? body.data.length : body.size);
    if ('failed' in outcome) return { kind: 'failed', message: outcome.failed };
    const { status, sent } = outcome.response;
    if (!PUT_OK.has(status)) return { kind: 'refused', status, message: `PUT ${kind}/${key} answered HTTP ${status}` };
    if ('file' in body && sent && sent.sha256 !== body.sha256) {
      return { kind: 'failed', message: `the file behind cas/${key} changed while it was uploaded` };
    }
    return { kind: 'stored' };
  }

  /** One request with retries; `failed` carries a one-line reason (never a header value). */
  private async send(
    method: 'GET' | 'PUT' | 'HEAD',
    kind: CacheKind,
    key: string,
    body: PutBody | undefined,
    mode: ResponseMode,
    bytes: number,
  ): Promise<{ response: RawResponse } | { failed: string }> {
    const what = `${method} ${kind}/${key.slice(0, 12)}…`;
    let last = '';
    for (let attempt = 1; attempt <= this.options.attempts; attempt++) {
      if (this.disabledBecause) return { failed: `the remote cache is off for this run (${this.disabledBecause})` };
      try {
        const response = await this.semaphore.run(() => this.attempt(method, this.url(kind, key), body, mode, bytes));
        this.consecutiveFailures = 0;
        if (!RETRYABLE.has(response.status) || attempt === this.options.attempts) return { response };
        last = `HTTP ${response.status}`;
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        last = error.message;
        this.consecutiveFailures += 1;
        if (error.tooSlow) {
          this.disabledBecause = `${what} ${error.message}`;
          return { failed: `${what} ${error.message}; the remote cache is off for the rest of this run` };
        }
        if (this.consecutiveFailures >= this.options.maxTransportFailures) {
          this.disabledBecause = `${this.consecutiveFailures} requests in a row failed, the last: ${error.message}`;
          return { failed: `${what} failed: ${error.message}; the remote cache is off for the rest of this run` };
        }
      }
      if (attempt < this.options.attempts) {
        const backoff = Math.min(this.options.backoffCapMs, this.options.backoffBaseMs * 2 ** (attempt - 1));
        await sleep(backoff / 2 + Math.random() * (backoff / 2));
      }
    }
    return { failed: `${what} failed after ${this.options.attempts} attempts: ${last}` };
  }

  private attempt(method: string, url: string, body: PutBody | undefined, mode: ResponseMode, bytes: number): Promise<RawResponse> {
    this.requests += 1;
    const target = new URL(url);
    const lib = target.protocol === 'https:' ? https : http;
    const length = body === undefined ? 0 : 'data' in body ? body.data.length : body.size;
    const headers: Record<string, string | number> = { ...this.options.headers, 'content-type': 'application/octet-stream' };
    // bazel-remote answers 400 to a body without Content-Length; Node sends a streamed body chunked unless it is set.
    if (method === 'PUT') headers['content-length'] = length;
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const timers: NodeJS.Timeout[] = [];
      const fail = (message: string, tooSlow = false): void => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        req.destroy();
        reject(new TransportError(message, tooSlow));
      };
      const succeed = (response: RawResponse): void => {
        if (settled) return;
        settled = true;
        for (const t of timers) clearTimeout(t);
        resolve(response);
      };
      const req = lib.request(target, { method, headers, agent: this.agent });
      req.setTimeout(this.options.idleTimeoutMs, () => fail(`no data for ${this.options.idleTimeoutMs} ms`));
      const deadlineMs = this.deadlineFor(bytes);
      timers.push(setTimeout(() => fail(this.tooSlowMessage(bytes, deadlineMs), true), deadlineMs));
      req.on('socket', (socket) => {
        if (!socket.connecting) return;
        const t = setTimeout(() => fail(`cannot connect within ${this.options.connectTimeoutMs} ms`), this.options.connectTimeoutMs);
        timers.push(t);
        socket.once('connect', () => clearTimeout(t));
      });
      req.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
      req.on('response', (res) => {
        this.readResponse(
          res,
          mode,
          method,
          (response) => succeed({ ...response, ...(sent ? { sent: { sha256: sent.digest('hex') } } : {}) }),
          fail,
        );
      });
      let sent: ReturnType<typeof createHash> | undefined;
      const whole = body && 'file' in body ? readSmallFile(body.file, body.size) : undefined;
      if (body === undefined) req.end();
      else if ('data' in body) req.end(body.data);
      else if (whole) {
        sent = createHash('sha256').update(whole);
        req.end(whole);
      } else {
        sent = createHash('sha256');
        const hash = sent;
        const stream = createReadStream(body.file);
        stream.on('data', (chunk) => hash.update(chunk));
        stream.on('error', (error: NodeJS.ErrnoException) => fail(`cannot read ${body.file}: ${error.code ?? error.message}`));
        stream.pipe(req);
      }
    });
  }

  private tooSlowMessage(bytes: number, deadlineMs: number): string {
    const { deadlineFloorMs, minRateBytesPerSec } = this.options;
    return `took over ${seconds(deadlineMs)} s, its deadline (${bytes} bytes at no less than ${Math.round(minRateBytesPerSec / 1024)} KiB/s, never under ${seconds(deadlineFloorMs)} s): the server is too slow`;
  }

  /**
   * Reads an answer as `mode` says and calls `done` or `fail` once. An answer cut short on
   * purpose (larger than allowed) is settled before its socket is destroyed, so the error that
   * destroying raises is not taken for a transport failure.
   */
  private readResponse(
    res: IncomingMessage,
    mode: ResponseMode,
    method: string,
    done: (r: RawResponse) => void,
    fail: (message: string) => void,
  ): void {
    const status = res.statusCode ?? 0;
    const onError = (error: Error): void => fail(error.message);
    const onAborted = (): void => fail('connection closed mid-answer');
    res.on('error', onError);
    res.on('aborted', onAborted);
    if (method === 'HEAD' || mode.kind === 'discard' || status !== 200) {
      res.resume();
      res.on('end', () => done({ status }));
      return;
    }
    const cutShort = (response: RawResponse): void => {
      done(response);
      res.destroy();
    };
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > mode.maxBytes) {
      // Not a transport failure: the entry is larger than it should be.
      cutShort(mode.kind === 'file' ? { status, written: { sha256: '', size: declared } } : { status, tooLarge: mode.maxBytes });
      return;
    }
    if (mode.kind === 'buffer') {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > mode.maxBytes) cutShort({ status, tooLarge: mode.maxBytes });
        else chunks.push(chunk);
      });
      res.on('end', () => done({ status, body: Buffer.concat(chunks) }));
      return;
    }
    const hash = createHash('sha256');
    let size = 0;
    let over = false;
    const out = createWriteStream(mode.file);
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > mode.maxBytes) {
        // More bytes than the digest names: no point reading on.
        if (!over) {
          over = true;
          res.unpipe(out);
          out.end();
          cutShort({ status, written: { sha256: '', size } });
        }
        return;
      }
      hash.update(chunk);
    });
    out.on('error', (error: NodeJS.ErrnoException) => fail(`cannot write ${mode.file}: ${error.code ?? error.message}`));
    out.on('finish', () => {
      if (!over) done({ status, written: { sha256: hash.digest('hex'), size } });
    });
    res.pipe(out);
  }
}
