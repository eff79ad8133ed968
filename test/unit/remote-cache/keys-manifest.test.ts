import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base64urlToHex, EMPTY_SHA256, isSha256Hex, llmCacheKey, sha256Hex, stageCacheKey } from '../../../src/engine/remote-cache/keys.ts';
import { encodeManifest, parseManifest, signatureProblem, signManifest, type Manifest } from '../../../src/engine/remote-cache/manifest.ts';
import { entryPathProblem } from '../../../src/engine/remote-cache/remote-cache.ts';
import { digest } from '../../../src/engine/state/hash-file.ts';

describe('remote cache keys', () => {
  it('keys - 64 lowercase hex, and a stage key never equals an LLM key for the same input', () => {
    const input = 'Kq3xmR2_fingerprint-like-text';
    const stage = stageCacheKey(input, '0.1.0');
    const llm = llmCacheKey(input);
    expect(isSha256Hex(stage)).toBe(true);
    expect(isSha256Hex(llm)).toBe(true);
    expect(stage).not.toBe(llm);
    expect(stage).not.toBe(sha256Hex(input));
  });

  it('keys - another refinery version gives another stage key (task imports are not in the fingerprint)', () => {
    expect(stageCacheKey('fp', '0.1.0')).not.toBe(stageCacheKey('fp', '0.2.0'));
  });

  it('digests - the local base64url content hash converts to the hex digest the protocol names blobs by', () => {
    expect(base64urlToHex(digest('hello\n'))).toBe(sha256Hex('hello\n'));
    expect(sha256Hex('')).toBe(EMPTY_SHA256);
  });

  it.each([
    ['', 'an empty path'],
    ['/etc/passwd', 'an absolute path'],
    ['../x', "'..' segment"],
    ['a/../../x', "'..' segment"],
    ['a/./b', "'.' or '..' segment"],
    ['a//b', 'empty'],
    ['a\\b', 'backslash'],
  ])('paths - %j in an entry is refused', (p, words) => {
    expect(entryPathProblem(p)).toContain(words);
  });

  it('paths - relative POSIX paths are accepted', () => {
    expect(entryPathProblem('logs/log_1/turn_1/analysis.json')).toBeUndefined();
    expect(entryPathProblem('.refinery/sessions/x/criteria.json')).toBeUndefined();
  });
});

const MANIFEST: Manifest = {
  refinery: '0.1.0',
  kind: 'stage',
  key: 'a'.repeat(64),
  fingerprint: 'fp',
  stage: 's',
  outputs: { o: { path: 'out/o.json', sha256: 'b'.repeat(64), size: 10, schema: 'x' } },
  duration_ms: 5,
  cost_usd: 0,
  llm_calls: 0,
  created_at: '2026-12-01T00:00:00.000Z',
};

describe('remote cache manifest', () => {
  it('manifest - round-trips through its blob', () => {
    expect(parseManifest(encodeManifest(MANIFEST))).toEqual({ manifest: MANIFEST });
  });

  it.each([
    ['not JSON', Buffer.from('{'), 'not JSON'],
    ['a bad digest', encodeManifest({ ...MANIFEST, outputs: { o: { path: 'o', sha256: 'XYZ', size: 1 } } }), 'outputs.o.sha256'],
    ['a negative size', encodeManifest({ ...MANIFEST, outputs: { o: { path: 'o', sha256: 'b'.repeat(64), size: -1 } } }), 'outputs.o.size'],
  ])('manifest - %s is refused', (_name, blob, words) => {
    const parsed = parseManifest(blob);
    expect('problem' in parsed && parsed.problem).toContain(words);
  });

  it('signatures - a signed manifest holds; a wrong key, an edited file digest or no signature is refused', () => {
    const team = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const signed = signManifest(MANIFEST, team.privateKey);
    expect(signatureProblem(signed, team.publicKey)).toBeUndefined();
    expect(signatureProblem(signed, other.publicKey)).toContain('does not match');
    const edited = { ...signed, outputs: { o: { ...signed.outputs.o!, sha256: 'c'.repeat(64) } } };
    expect(signatureProblem(edited, team.publicKey)).toContain('does not match');
    expect(signatureProblem({ ...signed, key: 'd'.repeat(64) }, team.publicKey)).toContain('does not match');
    expect(signatureProblem(MANIFEST, team.publicKey)).toContain('not signed');
    expect(signatureProblem({ ...signed, signature: '!!' }, team.publicKey)).toContain('does not match');
    // No verify key configured: signatures are not required.
    expect(signatureProblem(MANIFEST, undefined)).toBeUndefined();
  });
});
