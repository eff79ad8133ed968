import { fileURLToPath } from 'node:url';

/** refinery's own launcher, so the instructions work whether or not `refinery` is on the agent's PATH. */
export const REFINERY_BIN = fileURLToPath(new URL('../../bin/refinery.js', import.meta.url));

/** argv of `refinery -C ROOT jobs publish --registry-dir DIR` (the agent adds --job, --event, --detail). */
export function publisherArgv(root: string, registryDir: string): string[] {
  return [process.execPath, REFINERY_BIN, '-C', root, 'jobs', 'publish', '--registry-dir', registryDir];
}
