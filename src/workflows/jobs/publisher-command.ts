import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * refinery's own launcher, so the instructions work whether or not `refinery` is on the agent's PATH.
 * Found by walking up from this module: it sits at src/jobs/ in a clone but at dist/src/jobs/ in the
 * built package (and under node_modules/refinery/ when installed or run through npx), so no fixed
 * relative path fits every layout.
 */
export function refineryBin(moduleUrl: string = import.meta.url): string {
  const start = path.dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const bin = path.join(dir, 'bin', 'refinery.js');
    if (existsSync(bin) && existsSync(path.join(dir, 'package.json'))) return bin;
    if (path.dirname(dir) === dir) throw new Error(`cannot find bin/refinery.js in any folder above ${start}`);
  }
}

/** argv of `refinery -C ROOT jobs publish --registry-dir DIR` (the agent adds --job, --event, --detail). */
export function publisherArgv(root: string, registryDir: string): string[] {
  return [process.execPath, refineryBin(), '-C', root, 'jobs', 'publish', '--registry-dir', registryDir];
}
