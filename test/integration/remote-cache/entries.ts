// Entries written straight into the nginx cache's folder, as a hostile or broken writer would.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { encodeActionResult } from '../../../src/engine/remote-cache/action-result.ts';
import { stageCacheKey } from '../../../src/engine/remote-cache/keys.ts';
import { REPO_ROOT } from '../../helpers/project.ts';
import type { NginxCache } from '../../helpers/nginx-cache.ts';

export const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function stageKey(fingerprint: string): string {
  return stageCacheKey(fingerprint, VERSION);
}

export function putBlob(ngx: NginxCache, data: Buffer | string, prefix = ''): { sha256: string; size: number } {
  const buf = Buffer.from(data);
  const hash = sha256(buf);
  const file = path.join(ngx.root, prefix, 'cas', hash);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, buf);
  return { sha256: hash, size: buf.length };
}

/** A stage entry whose manifest and action-cache entry name `files` (path -> content). */
export function forgeStageEntry(
  ngx: NginxCache,
  options: { fingerprint: string; stage: string; files: Array<{ name: string; path: string; data: string }>; acPaths?: string[] },
  prefix = '',
): string {
  const key = stageKey(options.fingerprint);
  const outputs: Record<string, { path: string; sha256: string; size: number }> = {};
  for (const f of options.files) outputs[f.name] = { path: f.path, ...putBlob(ngx, f.data, prefix) };
  const manifest = {
    refinery: VERSION,
    kind: 'stage',
    key,
    fingerprint: options.fingerprint,
    stage: options.stage,
    outputs,
    duration_ms: 1000,
    cost_usd: 0,
    llm_calls: 0,
    created_at: new Date().toISOString(),
  };
  const m = putBlob(ngx, JSON.stringify(manifest), prefix);
  const listed = Object.values(outputs);
  const acFiles = (options.acPaths ?? listed.map((o) => o.path)).map((p, i) => {
    const o = listed[Math.min(i, listed.length - 1)] as { sha256: string; size: number };
    return { path: p, digest: { hash: o.sha256, sizeBytes: o.size }, isExecutable: false };
  });
  const entry = encodeActionResult({
    outputFiles: [...acFiles, { path: '.refinery/manifest.json', digest: { hash: m.sha256, sizeBytes: m.size }, isExecutable: false }],
    exitCode: 0,
    worker: 'forger',
  });
  const file = path.join(ngx.root, prefix, 'ac', key);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, entry);
  return key;
}
