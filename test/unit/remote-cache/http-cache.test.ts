// The HTTP client of the remote cache against real HTTP servers on 127.0.0.1 that answer as a test
// tells them to: headers, retries, timeouts, the concurrency limit, digests while streaming.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpCache } from '../../../src/engine/remote-cache/http-cache.ts';
import { freePort } from '../../helpers/mosquitto.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

type Handler = (req: Seen, res: http.ServerResponse) => void;

const servers: Array<http.Server | net.Server> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    if ('closeAllConnections' in s) s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function serve(handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(s);
      handler(s, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'refinery-http-cache-'));
  dirs.push(d);
  return d;
}

const KEY = 'ab'.repeat(32);
const fast = { backoffBaseMs: 5, backoffCapMs: 20 };

describe('remote cache HTTP client', () => {
  it('put - every PUT carries Content-Length and no chunked encoding, for a buffer and for a streamed file', async () => {
    const { url, seen } = await serve((_req, res) => res.writeHead(201).end());
    const cache = new HttpCache({ baseUrl: url, headers: { 'x-team': 'blue' }, ...fast });
    const dir = tempDir();
    const file = path.join(dir, 'blob');
    const data = Buffer.alloc(300_000, 7);
    writeFileSync(file, data);
    const sha = createHash('sha256').update(data).digest('hex');
    expect(await cache.put('ac', KEY, { data: Buffer.from('entry') })).toEqual({ kind: 'stored' });
    expect(await cache.put('cas', sha, { file, size: data.length, sha256: sha })).toEqual({ kind: 'stored' });
    cache.close();
    expect(
      seen.map((s) => [s.method, s.url, s.headers['content-length'], s.headers['transfer-encoding'], s.headers['x-team'], s.body.length]),
    ).toEqual([
      ['PUT', `/ac/${KEY}`, '5', undefined, 'blue', 5],
      ['PUT', `/cas/${sha}`, '300000', undefined, 'blue', 300_000],
    ]);
  });

  it('put - a file over 1 MiB is streamed (smaller ones are read at once): its length and every byte arrive, and a changed one is reported', async () => {
    const { url, seen } = await serve((_req, res) => res.writeHead(201).end());
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    const file = path.join(tempDir(), 'blob');
    const data = Buffer.alloc(3 * 1024 * 1024 + 5, 9);
    writeFileSync(file, data);
    const sha = createHash('sha256').update(data).digest('hex');
    expect(await cache.put('cas', sha, { file, size: data.length, sha256: sha })).toEqual({ kind: 'stored' });
    expect(await cache.put('cas', KEY, { file, size: data.length, sha256: KEY })).toEqual({
      kind: 'failed',
      message: expect.stringContaining('changed while it was uploaded'),
    });
    cache.close();
    expect(seen[0]?.headers['content-length']).toBe(String(data.length));
    expect(seen[0]?.body.equals(data)).toBe(true);
  });

  it('put - a file that changes while it is uploaded is reported, not taken as stored', async () => {
    const { url } = await serve((_req, res) => res.writeHead(201).end());
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    const file = path.join(tempDir(), 'blob');
    writeFileSync(file, 'other bytes');
    const result = await cache.put('cas', KEY, { file, size: 11, sha256: KEY });
    cache.close();
    expect(result).toEqual({ kind: 'failed', message: expect.stringContaining('changed while it was uploaded') });
  });

  it('retries - 503 then 200 is a hit after one retry', async () => {
    let n = 0;
    const { url, seen } = await serve((_req, res) => (n++ === 0 ? res.writeHead(503).end() : res.writeHead(200).end('entry')));
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    expect(await cache.get('ac', KEY)).toEqual({ kind: 'hit', body: Buffer.from('entry') });
    cache.close();
    expect(seen).toHaveLength(2);
  });

  it.each([400, 401, 403, 413])('retries - HTTP %i is not retried', async (status) => {
    const { url, seen } = await serve((_req, res) => res.writeHead(status).end());
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    const put = await cache.put('cas', KEY, { data: Buffer.from('x') });
    cache.close();
    expect(put).toEqual({ kind: 'refused', status, message: `PUT cas/${KEY} answered HTTP ${status}` });
    expect(seen).toHaveLength(1);
  });

  it('misses - 404 and 204 are misses', async () => {
    let status = 404;
    const { url } = await serve((_req, res) => res.writeHead(status).end());
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    expect(await cache.get('ac', KEY)).toEqual({ kind: 'miss' });
    status = 204;
    expect(await cache.get('ac', KEY)).toEqual({ kind: 'miss' });
    cache.close();
  });

  it('fail open - three transport failures in a row turn the cache off for the run, without throwing', async () => {
    const port = await freePort();
    const cache = new HttpCache({ baseUrl: `http://127.0.0.1:${port}`, headers: {}, ...fast });
    const first = await cache.get('ac', KEY);
    expect(first).toEqual({ kind: 'failed', message: expect.stringContaining('ECONNREFUSED') });
    expect(cache.disabledBecause).toMatch(/3 requests in a row failed/);
    expect(cache.requests).toBe(3);
    // Off: no more requests at all.
    expect(await cache.put('cas', KEY, { data: Buffer.from('x') })).toEqual({
      kind: 'failed',
      message: expect.stringContaining('off for this run'),
    });
    expect(cache.requests).toBe(3);
    cache.close();
  });

  it('timeouts - a server that accepts and then says nothing is abandoned within the idle timeout', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((socket) => sockets.push(socket));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const cache = new HttpCache({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      headers: {},
      idleTimeoutMs: 200,
      attempts: 1,
      ...fast,
    });
    const started = Date.now();
    const result = await cache.get('cas', KEY);
    const took = Date.now() - started;
    cache.close();
    for (const s of sockets) s.destroy();
    expect(result).toEqual({ kind: 'failed', message: expect.stringContaining('no data for 200 ms') });
    expect(took).toBeLessThan(2000);
  });

  it('timeouts - an action-cache answer that trickles slower than its deadline is abandoned, not retried, and turns the cache off', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      const timer = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(timer));
    });
    const cache = new HttpCache({ baseUrl: url, headers: {}, deadlineFloorMs: 300, idleTimeoutMs: 5000, ...fast });
    const result = await cache.get('ac', KEY);
    cache.close();
    expect(result).toEqual({
      kind: 'failed',
      message: expect.stringMatching(
        /^GET ac\/(ab){6}… took over 0\.3 s, its deadline \(0 bytes at no less than 256 KiB\/s, never under 0\.3 s\): the server is too slow; the remote cache is off for the rest of this run$/,
      ),
    });
    expect(cache.requests).toBe(1);
    expect(cache.disabledBecause).toMatch(/too slow/);
  });

  it('timeouts - the deadline of a transfer is its size at the minimum rate, never under the floor', () => {
    const cache = new HttpCache({ baseUrl: 'http://127.0.0.1:1', headers: {}, deadlineFloorMs: 10_000, minRateBytesPerSec: 1024 });
    expect(cache.deadlineFor(0)).toBe(10_000);
    expect(cache.deadlineFor(5 * 1024)).toBe(10_000);
    expect(cache.deadlineFor(100 * 1024)).toBe(100_000);
    cache.close();
  });

  it('concurrency - requests in flight never exceed the limit', async () => {
    let inFlight = 0;
    let most = 0;
    const { url } = await serve((_req, res) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(404).end();
      }, 30);
    });
    const cache = new HttpCache({ baseUrl: url, headers: {}, concurrency: 3, ...fast });
    await Promise.all(Array.from({ length: 20 }, (_, i) => cache.get('cas', i.toString(16).padStart(64, '0'))));
    cache.close();
    expect(most).toBe(3);
  });

  it('downloads - a blob is streamed into a file and its digest checked; other bytes are a mismatch', async () => {
    const good = Buffer.from('the real artifact\n');
    const sha = createHash('sha256').update(good).digest('hex');
    let body = good;
    const { url } = await serve((_req, res) => res.writeHead(200, { 'content-length': String(body.length) }).end(body));
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    const file = path.join(tempDir(), 'out');
    expect(await cache.getToFile(sha, file, { sha256: sha, size: good.length })).toEqual({ kind: 'hit' });
    expect(readFileSync(file)).toEqual(good);
    body = Buffer.from('the fake artifact!\n');
    expect(await cache.getToFile(sha, file, { sha256: sha, size: good.length })).toEqual({
      kind: 'mismatch',
      message: expect.stringContaining('not the 18 bytes it is named by'),
    });
    body = Buffer.alloc(10_000, 1);
    expect((await cache.getToFile(sha, file, { sha256: sha, size: good.length })).kind).toBe('mismatch');
    cache.close();
  });

  it('downloads - an action-cache entry larger than allowed is refused without reading it all', async () => {
    const { url } = await serve((_req, res) => res.writeHead(200).end(Buffer.alloc(2048)));
    const cache = new HttpCache({ baseUrl: url, headers: {}, ...fast });
    expect(await cache.get('ac', KEY, 1024)).toEqual({ kind: 'failed', message: expect.stringContaining('larger than 1024 bytes') });
    cache.close();
  });
});
