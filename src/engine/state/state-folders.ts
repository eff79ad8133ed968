import path from 'node:path';
import { removeStaleTemps } from './atomic-file.ts';
import { ensureStateDir, type StateWarn } from './set-aside.ts';

/**
 * Readies `.refinery/` for a run that holds the project lock: a file found where one of its
 * folders belongs is set aside, and temporary files that runs which died (killed, or crashed
 * on a full disk) left behind are removed. Throws what mkdir throws (no space, no permission).
 */
export function prepareStateFolders(root: string, warn?: StateWarn): void {
  const base = path.join(root, '.refinery');
  for (const dir of ['state', 'cache', 'runs']) ensureStateDir(root, path.join(base, dir), warn);
  removeStaleTemps([base, path.join(base, 'state'), path.join(base, 'cache'), path.join(base, 'cache', 'pipelines')]);
}
