import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** refinery's own folder (holding package.json, tasks/, schemas/), from source or from dist/. */
export const PACKAGE_ROOT = ((): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('internal: refinery package.json not found');
    dir = parent;
  }
  return dir;
})();
