import { closeSync, existsSync, openSync, rmSync } from 'node:fs';

/**
 * Makes an empty file exist or not, as `present` says: a hint that bin/refinery.js's first line
 * tests with `[ -f ]` before Node starts. A hint is never trusted for an answer, so a failure to
 * write or remove one (a read-only folder, a full disk) is left unreported.
 */
export function keepHintFile(file: string, present: boolean): void {
  try {
    if (!present) rmSync(file, { force: true });
    else if (!existsSync(file)) closeSync(openSync(file, 'a'));
  } catch {
    // A hint, see above.
  }
}
