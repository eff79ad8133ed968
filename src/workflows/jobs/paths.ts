import path from 'node:path';
import { assertJobId } from './job-id.ts';

export const DEFAULT_REGISTRY_DIR = '.mam/jobs';
export const DEFAULT_TOPIC_ROOT = 'python/mqtt/jobs';

/** Where one registry and its audit logs live. All paths absolute. */
export interface RegistryPaths {
  registryDir: string;
  logsRoot: string;
}

/** The registry dir (default `.mam/jobs`) and, next to it, `delegate_job_logs/`. */
export function registryPaths(root: string, registryDir = DEFAULT_REGISTRY_DIR, logsRoot?: string): RegistryPaths {
  const dir = path.resolve(root, registryDir);
  return { registryDir: dir, logsRoot: logsRoot ? path.resolve(root, logsRoot) : path.join(path.dirname(dir), 'delegate_job_logs') };
}

export const lockFile = (paths: RegistryPaths): string => path.join(paths.registryDir, '.lock');
export const recordFile = (paths: RegistryPaths, id: string): string => path.join(paths.registryDir, `${assertJobId(id)}.json`);
export const extrasDir = (paths: RegistryPaths): string => path.join(paths.registryDir, '.refinery');
export const extrasFile = (paths: RegistryPaths, id: string): string => path.join(extrasDir(paths), `${assertJobId(id)}.json`);
export const jobLogDir = (paths: RegistryPaths, id: string): string => path.join(paths.logsRoot, assertJobId(id));

export function defaultTopicPrefix(id: string): string {
  return `${DEFAULT_TOPIC_ROOT}/${assertJobId(id)}`;
}

export function eventsTopic(topicPrefix: string): string {
  return `${topicPrefix}/events`;
}
