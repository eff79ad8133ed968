// An entry written to a real HTTP server on 127.0.0.1 that records what it receives.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteCache, type EntryFile } from '../../../src/engine/remote-cache/remote-cache.ts';
import { decodeActionResult } from '../../../src/engine/remote-cache/action-result.ts';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanup.splice(0)) c();
});

async function store(known: Set<string>): Promise<{ url: string; seen: string[]; bodies: Map<string, Buffer> }> {
  const seen: string[] = [];
  const bodies = new Map<string, Buffer>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      if (req.method === 'HEAD') return res.writeHead(known.has(req.url ?? '') ? 200 : 404).end();
      bodies.set(req.url ?? '', Buffer.concat(chunks));
      res.writeHead(201).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  cleanup.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, bodies };
}

const settings = (url: string) => ({
  baseUrl: url,
  readOnly: false,
  headers: {},
  concurrency: 4,
  maxBlobBytes: 64 * 1024 * 1024,
  idleTimeoutMs: 5000,
  deadlineFloorMs: 10_000,
  minRateBytesPerSec: 256 * 1024,
  source: 'test',
});

describe('remote cache entries', () => {
  it('write - blobs first, the action-cache entry last; a large blob the server has is not sent again', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-entry-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const big = Buffer.alloc(2 * 1024 * 1024, 3);
    const bigSha = createHash('sha256').update(big).digest('hex');
    writeFileSync(path.join(dir, 'big.bin'), big);
    const small = Buffer.from('{"ok":true}\n');
    const smallSha = createHash('sha256').update(small).digest('hex');
    writeFileSync(path.join(dir, 'small.json'), small);
    const server = await store(new Set([`/cas/${bigSha}`]));
    const cache = new RemoteCache(settings(server.url), '0.1.0');
    const files: EntryFile[] = [
      {
        name: 'big',
        path: 'out/big.bin',
        sha256: bigSha,
        size: big.length,
        isExecutable: false,
        body: { file: path.join(dir, 'big.bin') },
      },
      {
        name: 'small',
        path: 'out/small.json',
        sha256: smallSha,
        size: small.length,
        isExecutable: false,
        body: { file: path.join(dir, 'small.json') },
      },
    ];
    const key = 'f'.repeat(64);
    const warnings: string[] = [];
    expect(
      await cache.write(key, { kind: 'stage', fingerprint: 'fp', stage: 's', durationMs: 10, costUsd: 0, llmCalls: 0 }, files, (m) =>
        warnings.push(m),
      ),
    ).toBe(true);
    cache.close();
    expect(warnings).toEqual([]);
    expect(server.seen).toContain(`HEAD /cas/${bigSha}`);
    expect(server.seen).not.toContain(`PUT /cas/${bigSha}`);
    expect(server.seen).toContain(`PUT /cas/${smallSha}`);
    expect(server.seen.at(-1)).toBe(`PUT /ac/${key}`);
    const entry = decodeActionResult(server.bodies.get(`/ac/${key}`) as Buffer);
    expect(entry.outputFiles.map((f) => f.path)).toEqual(['.refinery/manifest.json', 'out/big.bin', 'out/small.json']);
    expect(entry.worker).toBe('refinery/0.1.0');
    expect(cache.summary()).toMatchObject({ uploaded: 1, problems: 0 });
  });

  it('write - read-only: nothing is sent', async () => {
    const server = await store(new Set());
    const cache = new RemoteCache({ ...settings(server.url), readOnly: true }, '0.1.0');
    const data = Buffer.from('x');
    const ok = await cache.write(
      'e'.repeat(64),
      { kind: 'llm', durationMs: 1, costUsd: 0, llmCalls: 1 },
      [
        {
          name: 'response',
          path: 'llm/response.json',
          sha256: createHash('sha256').update(data).digest('hex'),
          size: 1,
          isExecutable: false,
          body: { data },
        },
      ],
      () => {},
    );
    cache.close();
    expect(ok).toBe(false);
    expect(server.seen).toEqual([]);
  });
});
