import { closeSync, existsSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';

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

/** Keeps the marker in step with the run that just wrote the no-op record; a failure to is left unreported (a hint). */
export function markLeanStart(root: string, lean: boolean): void {
  const marker = leanStartMarker(root);
  try {
    if (!lean) rmSync(marker, { force: true });
    else if (!existsSync(marker)) closeSync(openSync(marker, 'a'));
  } catch {
    // A hint, see above.
  }
}
