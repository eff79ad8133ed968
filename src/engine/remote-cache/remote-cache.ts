// A refinery entry in a Bazel HTTP cache: output files as CAS blobs, a manifest blob beside them,
// and an ActionResult naming them all under a domain-separated action-cache key. Blobs go up
// first and the action-cache entry last, so a reader never finds an entry whose blobs are not
// there yet; a reader checks every digest, path and (optionally) the signature before using
// anything, and a wrong entry is refused and reported, never used. Failures are warnings.
import { writeFileSync } from 'node:fs';
import { decodeActionResult, encodeActionResult, type OutputFile } from './action-result.ts';
import type { RemoteCacheSummary } from '../types/events.ts';
import type { RemoteCacheSettings } from './config.ts';
import { HttpCache, type FileGetResult, type HttpCacheOptions, type PutBody, type PutResult } from './http-cache.ts';
import { EMPTY_SHA256, isSha256Hex, sha256Hex } from './keys.ts';
import {
  encodeManifest,
  MANIFEST_PATH,
  parseManifest,
  signatureProblem,
  signManifest,
  type Manifest,
  type ManifestFile,
} from './manifest.ts';

export type { RemoteCacheSummary };

export type Warn = (message: string) => void;

export interface EntryFile {
  name: string;
  /** POSIX path relative to the project root (the path in the ActionResult). */
  path: string;
  sha256: string;
  size: number;
  isExecutable: boolean;
  schema?: string;
  body: { file: string } | { data: Buffer };
}

export interface EntryMeta {
  kind: Manifest['kind'];
  fingerprint?: string;
  stage?: string;
  durationMs: number;
  costUsd: number;
  llmCalls: number;
}

export type ReadEntry =
  | { kind: 'hit'; manifest: Manifest; files: OutputFile[] }
  | { kind: 'miss' }
  | { kind: 'refused'; reason: string }
  | { kind: 'failed'; message: string };

/** Paths an entry may name: relative, '/'-separated, no '.' or '..' segment, no backslash, no NUL. */
export function entryPathProblem(p: string): string | undefined {
  if (p === '') return 'an empty path';
  if (p.startsWith('/')) return `an absolute path (${p})`;
  if (p.includes('\\') || p.includes('\0')) return `a path with a backslash or NUL (${JSON.stringify(p)})`;
  if (p.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) return `a path with an empty, '.' or '..' segment (${p})`;
  return undefined;
}

const MAX_MANIFEST_BYTES = 1024 * 1024;
/** Blobs from this size on are asked for (HEAD) before they are sent. */
const HEAD_FIRST_BYTES = 1024 * 1024;

export class RemoteCache {
  readonly http: HttpCache;
  private readonly stats: RemoteCacheSummary;
  /** Why this run no longer writes (the server refused a write); undefined while it does. */
  private writesOffBecause: string | undefined;
  private readonly pending = new Set<Promise<unknown>>();
  /** Blobs stored (or known stored) in this run: each is uploaded once. */
  private readonly stored = new Map<string, Promise<PutResult>>();
  private lastDisabledWarning: string | undefined;

  constructor(
    readonly settings: RemoteCacheSettings,
    readonly version: string,
    http: Partial<HttpCacheOptions> = {},
  ) {
    this.http = new HttpCache({
      baseUrl: settings.baseUrl,
      headers: settings.headers,
      concurrency: settings.concurrency,
      idleTimeoutMs: settings.idleTimeoutMs,
      deadlineFloorMs: settings.deadlineFloorMs,
      minRateBytesPerSec: settings.minRateBytesPerSec,
      ...http,
    });
    this.stats = {
      url: settings.baseUrl,
      readOnly: settings.readOnly,
      stages: 0,
      calls: 0,
      savedMs: 0,
      savedUsd: 0,
      uploaded: 0,
      refused: 0,
      problems: 0,
    };
  }

  get writable(): boolean {
    return !this.settings.readOnly && this.writesOffBecause === undefined && this.http.disabledBecause === undefined;
  }

  get active(): boolean {
    return this.http.disabledBecause === undefined;
  }

  summary(): RemoteCacheSummary {
    return { ...this.stats, savedMs: Math.round(this.stats.savedMs), savedUsd: Math.round(this.stats.savedUsd * 1e6) / 1e6 };
  }

  /** Counts what a hit saved. */
  served(what: 'stage' | 'call', manifest: Pick<Manifest, 'duration_ms' | 'cost_usd' | 'llm_calls'>): void {
    if (what === 'stage') this.stats.stages += 1;
    this.stats.calls += what === 'call' ? 1 : manifest.llm_calls;
    this.stats.savedMs += manifest.duration_ms;
    this.stats.savedUsd += manifest.cost_usd;
  }

  /** A refused entry: counted and reported. */
  refuse(warn: Warn, what: string, reason: string): void {
    this.stats.refused += 1;
    this.stats.problems += 1;
    warn(
      `remote cache: refused the entry for ${what}: ${reason}; ${what.startsWith('a model') ? 'the call is made here' : 'it runs here'}`,
    );
  }

  /** A failed request: one warning, and once the cache turns itself off, one more saying so and then silence. */
  problem(warn: Warn, message: string): void {
    const off = this.http.disabledBecause;
    if (off !== undefined && this.lastDisabledWarning === off) return;
    if (off !== undefined) this.lastDisabledWarning = off;
    this.stats.problems += 1;
    warn(`remote cache: ${message}`);
  }

  /** Runs work in the background; `flush` waits for all of it. */
  track(work: Promise<unknown>): void {
    const p = work.catch(() => undefined).finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  async flush(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  close(): void {
    this.http.close();
  }

  /**
   * The entry under `key`, checked: an ActionResult with exit code 0, no directories or
   * symlinks, sane unique paths, and a manifest blob (digest checked) that names exactly the
   * same files, of the expected kind and key, signed when a verify key is configured.
   */
  async read(key: string, kind: Manifest['kind']): Promise<ReadEntry> {
    if (!this.active) return { kind: 'miss' };
    const got = await this.http.get('ac', key);
    if (got.kind === 'miss') return { kind: 'miss' };
    if (got.kind === 'failed') return got;
    // bazel-remote treats a 0-byte entry as a miss; so does refinery.
    if (got.body.length === 0) return { kind: 'miss' };
    let result;
    try {
      result = decodeActionResult(got.body);
    } catch (error) {
      return { kind: 'refused', reason: `its action-cache entry is not an ActionResult (${(error as Error).message})` };
    }
    if (result.exitCode !== 0) return { kind: 'refused', reason: `its exit code is ${result.exitCode}` };
    if (result.otherOutputs > 0) return { kind: 'refused', reason: 'it has output directories or symlinks, which refinery never writes' };
    const seen = new Set<string>();
    for (const f of result.outputFiles) {
      const problem = entryPathProblem(f.path);
      if (problem) return { kind: 'refused', reason: `it names ${problem}` };
      if (seen.has(f.path)) return { kind: 'refused', reason: `it names ${f.path} twice` };
      seen.add(f.path);
      if (!isSha256Hex(f.digest.hash)) return { kind: 'refused', reason: `${f.path} has no sha256 digest` };
      if (f.digest.sizeBytes > this.settings.maxBlobBytes)
        return { kind: 'refused', reason: `${f.path} is ${f.digest.sizeBytes} bytes, over remote_cache.max_blob_mb` };
    }
    const manifestFile = result.outputFiles.find((f) => f.path === MANIFEST_PATH);
    if (!manifestFile) return { kind: 'refused', reason: `it has no ${MANIFEST_PATH}` };
    if (manifestFile.digest.sizeBytes > MAX_MANIFEST_BYTES) return { kind: 'refused', reason: 'its manifest is too large' };
    const blob = await this.http.get('cas', manifestFile.digest.hash, MAX_MANIFEST_BYTES, manifestFile.digest.sizeBytes);
    // A blob pruned since the entry was written: a miss, as bazel-remote answers for such entries.
    if (blob.kind === 'miss') return { kind: 'miss' };
    if (blob.kind === 'failed') return blob;
    if (sha256Hex(blob.body) !== manifestFile.digest.hash || blob.body.length !== manifestFile.digest.sizeBytes) {
      return { kind: 'refused', reason: 'its manifest blob does not match its digest' };
    }
    const parsed = parseManifest(blob.body);
    if ('problem' in parsed) return { kind: 'refused', reason: parsed.problem };
    const { manifest } = parsed;
    if (manifest.key !== key || manifest.kind !== kind) return { kind: 'refused', reason: 'its manifest was written for another entry' };
    const files = result.outputFiles.filter((f) => f !== manifestFile);
    const listed = Object.values(manifest.outputs);
    const same =
      listed.length === files.length &&
      listed.every((m) => files.some((f) => f.path === m.path && f.digest.hash === m.sha256 && f.digest.sizeBytes === m.size));
    if (!same) return { kind: 'refused', reason: 'its manifest and its action-cache entry name different files' };
    const signature = signatureProblem(manifest, this.settings.verifyKey);
    if (signature) return { kind: 'refused', reason: signature };
    return { kind: 'hit', manifest, files };
  }

  /** One blob into `dest`, its digest checked while it streams. */
  async download(file: ManifestFile, dest: string): Promise<FileGetResult> {
    if (file.size === 0 && file.sha256 === EMPTY_SHA256) {
      writeFileSync(dest, '');
      return { kind: 'hit' };
    }
    const got = await this.http.getToFile(file.sha256, dest, { sha256: file.sha256, size: file.size });
    // The server has it: a later upload of the same bytes (a worker's output, now another's input) is not needed.
    if (got.kind === 'hit' && !this.stored.has(file.sha256)) this.stored.set(file.sha256, Promise.resolve({ kind: 'stored' }));
    return got;
  }

  /** A small blob in memory, its digest checked. */
  async downloadBuffer(
    file: ManifestFile,
  ): Promise<
    { kind: 'hit'; body: Buffer } | { kind: 'miss' } | { kind: 'mismatch'; message: string } | { kind: 'failed'; message: string }
  > {
    if (file.size > MAX_MANIFEST_BYTES * 16) return { kind: 'failed', message: `${file.path} is too large` };
    const got = await this.http.get('cas', file.sha256, MAX_MANIFEST_BYTES * 16, file.size);
    if (got.kind !== 'hit') return got;
    if (sha256Hex(got.body) !== file.sha256 || got.body.length !== file.size)
      return { kind: 'mismatch', message: `blob cas/${file.sha256} does not match its digest` };
    return got;
  }

  /**
   * Stores an entry: every blob, then the manifest, then the action-cache entry, only if all
   * blobs were stored. Returns whether the entry was stored; problems go to `warn`.
   */
  async write(key: string, meta: EntryMeta, files: readonly EntryFile[], warn: Warn): Promise<boolean> {
    if (!this.writable) return false;
    for (const f of files) {
      const problem = entryPathProblem(f.path);
      if (problem || f.path === MANIFEST_PATH) {
        this.problem(warn, `not stored: it names ${problem ?? MANIFEST_PATH}`);
        return false;
      }
      if (f.size > this.settings.maxBlobBytes) {
        this.problem(warn, `not stored: ${f.path} is ${f.size} bytes, over remote_cache.max_blob_mb`);
        return false;
      }
    }
    let manifest: Manifest = {
      refinery: this.version,
      kind: meta.kind,
      key,
      ...(meta.fingerprint !== undefined ? { fingerprint: meta.fingerprint } : {}),
      ...(meta.stage !== undefined ? { stage: meta.stage } : {}),
      outputs: Object.fromEntries(
        files.map((f) => [f.name, { path: f.path, sha256: f.sha256, size: f.size, ...(f.schema ? { schema: f.schema } : {}) }]),
      ),
      duration_ms: Math.round(meta.durationMs),
      cost_usd: meta.costUsd,
      llm_calls: meta.llmCalls,
      created_at: new Date().toISOString(),
    };
    if (this.settings.signingKey) manifest = signManifest(manifest, this.settings.signingKey);
    const manifestBlob = encodeManifest(manifest);
    const manifestHash = sha256Hex(manifestBlob);
    // The blobs and the manifest go up together (a reader finds neither without the entry);
    // the action-cache entry only once every one of them is stored.
    const results = await Promise.all([
      ...files.map((f) =>
        this.putBlob(f.sha256, f.size, 'file' in f.body ? { file: f.body.file, size: f.size, sha256: f.sha256 } : { data: f.body.data }),
      ),
      this.putBlob(manifestHash, manifestBlob.length, { data: manifestBlob }),
    ]);
    const failed = results.find((r) => r.kind !== 'stored');
    if (failed) {
      this.writeProblem(warn, failed, 'its action-cache entry was not written');
      return false;
    }
    const entry = encodeActionResult({
      outputFiles: [
        ...files.map((f) => ({ path: f.path, digest: { hash: f.sha256, sizeBytes: f.size }, isExecutable: f.isExecutable })),
        { path: MANIFEST_PATH, digest: { hash: manifestHash, sizeBytes: manifestBlob.length }, isExecutable: false },
      ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      exitCode: 0,
      worker: `refinery/${this.version}`,
    });
    const ac = await this.http.put('ac', key, { data: entry });
    if (ac.kind !== 'stored') {
      this.writeProblem(warn, ac, 'the entry was not stored');
      return false;
    }
    this.stats.uploaded += 1;
    return true;
  }

  /** One file as a CAS blob (a worker's input), once per run; undefined when stored, else why not. */
  async storeFile(file: string, sha256: string, size: number): Promise<string | undefined> {
    if (size > this.settings.maxBlobBytes) return `it is ${size} bytes, over remote_cache.max_blob_mb`;
    const put = await this.putBlob(sha256, size, { file, size, sha256 });
    return put.kind === 'stored' ? undefined : put.message;
  }

  private putBlob(sha256: string, size: number, body: PutBody): Promise<PutResult> {
    // bazel-remote always has the empty blob; nginx serves a 0-byte file as well, but none is needed.
    if (size === 0 && sha256 === EMPTY_SHA256) return Promise.resolve({ kind: 'stored' });
    let known = this.stored.get(sha256);
    if (!known) {
      known = size >= HEAD_FIRST_BYTES ? this.putUnlessStored(sha256, body) : this.http.put('cas', sha256, body);
      this.stored.set(sha256, known);
      // A failed upload may be tried again by a later entry.
      void known.then((r) => {
        if (r.kind !== 'stored') this.stored.delete(sha256);
      });
    }
    return known;
  }

  /** A large blob the server may have already (another clone stored the same file): asked first, sent only if missing. */
  private async putUnlessStored(sha256: string, body: PutBody): Promise<PutResult> {
    if ((await this.http.has('cas', sha256)) === true) return { kind: 'stored' };
    return this.http.put('cas', sha256, body);
  }

  private writeProblem(warn: Warn, result: PutResult, consequence: string): void {
    if (result.kind === 'refused' && [401, 403, 405, 507].includes(result.status)) {
      const why =
        result.status === 507
          ? 'the server is out of space (HTTP 507)'
          : `the server does not let this client write (HTTP ${result.status}); set remote_cache.read_only (or --remote-cache-read-only) where only reading is allowed`;
      if (this.writesOffBecause === undefined) {
        this.writesOffBecause = why;
        this.problem(warn, `${why}; nothing more is uploaded in this run`);
      }
      return;
    }
    this.problem(warn, `${result.kind === 'stored' ? '' : result.message}; ${consequence}`);
  }
}
