import path from 'node:path';
import { keepHintFile } from './hint-file.ts';

/**
 * `.refinery/state/lean-start`: present when the last run that wrote a no-op record opened no
 * TLS connection of its own (its pipeline runs nothing in refinery's process, and it had no
 * remote cache), so the next `refinery run` may start Node without parsing the certificates
 * NODE_EXTRA_CA_CERTS names (see src/cli/deferred-ca.ts): bin/refinery.js's first line and
 * bin/quick-client.pl look for it. Only a hint, like the pre-check's marker: a run that finds
 * it needs the certificates after all starts again with them, so a marker out of step costs
 * one more start of Node, never a connection without them.
 */
export function leanStartMarker(root: string): string {
  return path.join(root, '.refinery', 'state', 'lean-start');
}

/** Keeps the marker in step with the run that just wrote the no-op record. */
export function markLeanStart(root: string, lean: boolean): void {
  keepHintFile(leanStartMarker(root), lean);
}
