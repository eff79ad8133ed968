// Keys and digests in the form the Bazel HTTP cache protocol wants: 64 lowercase hex digits.
// Action-cache keys are domain-separated, so a refinery key never names a Bazel action's result
// and a stage key never names an LLM answer, with no path prefix needed on the server.
import { sha256Hex } from '../state/hash-file.ts';

export { sha256Hex };

export const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const HEX64 = /^[0-9a-f]{64}$/;

export function isSha256Hex(value: string): boolean {
  return HEX64.test(value);
}

/**
 * The action-cache key of a stage result. The refinery version is part of it: a task's
 * fingerprint covers its own file, not the modules it imports, which another version may change.
 */
export function stageCacheKey(fingerprint: string, refineryVersion: string): string {
  return sha256Hex(`refinery:stage:v1\0${refineryVersion}\0${fingerprint}`);
}

/** The action-cache key of a model answer, from the LLM response cache's own content key. */
export function llmCacheKey(contentKey: string): string {
  return sha256Hex(`refinery:llm:v1\0${contentKey}`);
}

/** The local file hashes are sha256 in base64url; the protocol names blobs by the same hash in hex. */
export function base64urlToHex(hash: string): string {
  return Buffer.from(hash, 'base64url').toString('hex');
}
