import { existsSync } from 'node:fs';
import path from 'node:path';

/** Where a project configures its remote cache (`remote_cache:`), relative to its root. */
export const REMOTE_CACHE_CONFIG_FILE = 'refinery.config.yaml';

/**
 * Whether anything could name a remote cache for a run: the flag, REFINERY_REMOTE_CACHE, or a
 * config file. When nothing does, config.ts (and the YAML and zod libraries it loads, a tenth
 * of a run that checks one changed file) need not be loaded.
 */
export function remoteCacheMayBeConfigured(root: string, env: NodeJS.ProcessEnv, flagUrl: string | undefined): boolean {
  return flagUrl !== undefined || Boolean(env.REFINERY_REMOTE_CACHE) || existsSync(path.join(root, REMOTE_CACHE_CONFIG_FILE));
}
