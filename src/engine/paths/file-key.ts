import { createHash } from 'node:crypto';

const SAFE = /^[A-Za-z0-9._-]{1,80}$/;

/**
 * A file name for an id (a stage instance, a cache name), distinct for distinct ids. A short id
 * of plain characters is its own key; any other gets a readable slug, '~' (a character plain
 * ids never have) and a hash of the exact id, so `s[a b]` and `s[a_b]` never share a file.
 */
export function fileKey(id: string): string {
  if (SAFE.test(id) && id !== '.' && id !== '..') return id;
  const plain = id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 64);
  return `${plain}~${createHash('sha256').update(id).digest('hex').slice(0, 20)}`;
}
