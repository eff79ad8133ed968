// The manifest every refinery entry carries beside its output files (`.refinery/manifest.json`):
// what the entry is for, what the work cost where it ran, and, for teams that want it, an Ed25519
// signature over the entry's key and its files' digests. The Bazel protocol has no header for a
// signature, so it travels inside the entry; readers hold only the public key and cannot forge one.
import { sign, verify, type KeyObject } from 'node:crypto';
import { z } from 'zod';

export const MANIFEST_PATH = '.refinery/manifest.json';

const fileSchema = z.strictObject({
  path: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.int().min(0),
  schema: z.string().optional(),
});

const manifestSchema = z.looseObject({
  refinery: z.string(),
  kind: z.enum(['stage', 'llm']),
  /** The action-cache key the entry was written under. */
  key: z.string().regex(/^[0-9a-f]{64}$/),
  /** Stage entries: the stage's fingerprint and id where it ran. */
  fingerprint: z.string().optional(),
  stage: z.string().optional(),
  /** Output name -> file. */
  outputs: z.record(z.string(), fileSchema),
  /** How long the work took and what its model calls cost where it ran: what a hit saves. */
  duration_ms: z.number().min(0),
  cost_usd: z.number().min(0),
  llm_calls: z.int().min(0),
  created_at: z.string(),
  signature: z.string().optional(),
});

export type Manifest = z.output<typeof manifestSchema>;
export type ManifestFile = z.output<typeof fileSchema>;

/** What the signature covers: the key, the fingerprint, and every file as (path, sha256, size), sorted. */
function signedText(m: Pick<Manifest, 'key' | 'kind' | 'outputs'> & { fingerprint?: string | undefined }): Buffer {
  const files = Object.entries(m.outputs)
    .map(([name, f]) => `${name}\0${f.path}\0${f.sha256}\0${f.size}`)
    .sort();
  return Buffer.from(['refinery-remote-cache-v1', m.kind, m.key, m.fingerprint ?? '', ...files].join('\n'));
}

export function signManifest(m: Manifest, key: KeyObject): Manifest {
  return { ...m, signature: sign(null, signedText(m), key).toString('base64') };
}

export function encodeManifest(m: Manifest): Buffer {
  return Buffer.from(`${JSON.stringify(m, null, 2)}\n`);
}

/** The manifest in a blob, or why it is none. */
export function parseManifest(blob: Buffer): { manifest: Manifest } | { problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(blob.toString('utf8'));
  } catch {
    return { problem: 'its manifest is not JSON' };
  }
  const parsed = manifestSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { problem: `its manifest is malformed (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})` };
  }
  return { manifest: parsed.data };
}

/** Undefined when the signature holds (or none is required); else why the entry is refused. */
export function signatureProblem(m: Manifest, key: KeyObject | undefined): string | undefined {
  if (!key) return undefined;
  if (!m.signature) return 'it is not signed, and remote_cache.verify_key requires signed entries';
  let ok = false;
  try {
    ok = verify(null, signedText(m), key, Buffer.from(m.signature, 'base64'));
  } catch {
    ok = false;
  }
  return ok ? undefined : 'its signature does not match remote_cache.verify_key';
}
