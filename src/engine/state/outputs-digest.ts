import { createHash } from 'node:crypto';
import type { StageRecord } from './stage-record.ts';

/**
 * What a stage wrote, as one hash of its outputs' names and contents (as its record has them):
 * what a stage that `needs:` it folds into its fingerprint, so it runs again only when that
 * changed, not whenever this stage ran. 'none' without a record.
 */
export function outputsDigest(record: StageRecord | undefined): string {
  if (!record) return 'none';
  const h = createHash('sha256');
  for (const name of Object.keys(record.outputs).sort()) h.update(`${name}\0${record.outputs[name]?.[3]}\0`);
  return h.digest('base64url');
}
