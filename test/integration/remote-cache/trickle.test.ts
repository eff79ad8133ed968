// A cache server that trickles (a byte every 8 s) cannot hold a run: each transfer has a total
// deadline scaled to its size, with a floor; past it the cache is off for the run, one warning says
// why, and the stages run here. The server is a real HTTP server on 127.0.0.1 speaking the Bazel
// HTTP cache protocol (GET/PUT/HEAD of /ac/<key> and /cas/<sha256>), its blobs kept in memory.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProject, runCli, type CliResult, type TempProject } from '../../helpers/project.ts';
import { runEnd, stageStarts, warnings } from './clones.ts';

interface TrickleCache {
  url: string;
  /** While true, every blob (/cas/) is answered one byte every 8 s. */
  trickle: boolean;
  /** Blob requests that were trickled. */
  trickled: number;
  server: Server;
}

const TRICKLE_MS = 8_000;

function startCache(): Promise<TrickleCache> {
  const entries = new Map<string, Buffer>();
  const cache = { url: '', trickle: false, trickled: 0 } as TrickleCache;
  cache.server = createServer((req, res) => {
    const uri = req.url ?? '';
    if (req.method === 'PUT') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        entries.set(uri, Buffer.concat(chunks));
        res.writeHead(201).end();
      });
      return;
    }
    const body = entries.get(uri);
    if (!body) return res.writeHead(404).end();
    if (req.method === 'HEAD') return res.writeHead(200, { 'content-length': String(body.length) }).end();
    if (!cache.trickle || !uri.startsWith('/cas/')) return res.writeHead(200, { 'content-length': String(body.length) }).end(body);
    cache.trickled += 1;
    res.writeHead(200, { 'content-length': String(body.length) });
    let sent = 0;
    const timer = setInterval(() => {
      if (sent < body.length) res.write(body.subarray(sent, sent + 1));
      sent += 1;
      if (sent >= body.length) {
        clearInterval(timer);
        res.end();
      }
    }, TRICKLE_MS);
    res.on('close', () => clearInterval(timer));
  });
  return new Promise((resolve) =>
    cache.server.listen(0, '127.0.0.1', () => {
      cache.url = `http://127.0.0.1:${(cache.server.address() as AddressInfo).port}`;
      resolve(cache);
    }),
  );
}

const projects: TempProject[] = [];
let cache: TrickleCache;

beforeAll(async () => {
  cache = await startCache();
});

afterAll(async () => {
  for (const p of projects) p.cleanup();
  cache.server.closeAllConnections();
  await new Promise<void>((resolve) => cache.server.close(() => resolve()));
});

function run(p: TempProject): Promise<CliResult> {
  return runCli(['run', 'demo', '--json'], { cwd: p.root, env: { REFINERY_REMOTE_CACHE: cache.url } });
}

describe('remote cache that trickles', () => {
  it('trickle - a blob sent a byte every 8 s is abandoned at its deadline; the run finishes here with one warning saying why', async () => {
    const writer = demoProject();
    projects.push(writer);
    const stored = await run(writer);
    expect(stored.code, stored.stderr).toBe(0);
    expect(runEnd(stored).remote).toMatchObject({ uploaded: 2, problems: 0 });

    cache.trickle = true;
    const reader = demoProject();
    projects.push(reader);
    // The defaults: every blob here is small, so the floor (10 s) is its deadline.
    const started = Date.now();
    const result = await run(reader);
    const tookMs = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(cache.trickled).toBeGreaterThanOrEqual(1);
    expect(stageStarts(result)).toEqual(['a', 'b']);
    expect(readFileSync(reader.path('out/a.txt'), 'utf8')).toBe('alpha\nhello\n');
    expect(warnings(result)).toEqual([
      expect.stringMatching(
        /^remote cache: GET cas\/[0-9a-f]{12}… took over 10 s, its deadline \(\d+ bytes at no less than 256 KiB\/s, never under 10 s\): the server is too slow; the remote cache is off for the rest of this run; a runs here$/,
      ),
    ]);
    // Bounded: one deadline (10 s) and the local run; the trickled manifest (hundreds of bytes at
    // 8 s each) would hold the run for most of an hour.
    expect(tookMs).toBeLessThan(45_000);
  });
});
