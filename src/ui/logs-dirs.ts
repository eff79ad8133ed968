// Which MassGen logs folders the dashboard shows when none is named: MassGen's own
// (.massgen/massgen_logs) and the `logs` param of the project's pipelines (the analyze pipeline's,
// resolved as a run would), those that exist inside the project; MassGen's own even before it exists.
import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { PipelineStore } from './data/pipelines.ts';
import { realRoot } from './safe-path.ts';

/** A folder inside the project (symlinks followed), or a message saying why not. */
export function checkLogsDir(root: string, dir: string): { ok: true; dir: string } | { ok: false; error: string } {
  const abs = path.resolve(root, dir);
  let real: string;
  try {
    real = realpathSync.native(abs);
    if (!statSync(real).isDirectory()) return { ok: false, error: `--logs-dir ${dir}: not a folder` };
  } catch {
    return { ok: false, error: `--logs-dir ${dir}: no such folder` };
  }
  const rootReal = realRoot(root);
  if (real !== rootReal && !real.startsWith(`${rootReal}${path.sep}`)) {
    return {
      ok: false,
      error: `--logs-dir ${dir} is outside the project (${root}); the dashboard serves nothing outside it: run refinery -C <the folder holding it> ui`,
    };
  }
  return { ok: true, dir: abs };
}

export async function defaultLogsDirs(root: string, pipelines: PipelineStore): Promise<string[]> {
  const massgen = path.join(root, '.massgen', 'massgen_logs');
  const candidates = new Set<string>([massgen]);
  for (const name of pipelines.names()) {
    const loaded = await pipelines.load(name);
    const logs = loaded?.ok ? loaded.pipeline.params.logs : undefined;
    if (typeof logs === 'string' && logs !== '') candidates.add(path.resolve(root, logs));
  }
  // MassGen's own folder counts before it exists: an experiments run started later makes it, and
  // its running cells' pages are served from it (each request checks it is inside the project).
  return [...candidates].filter((d) => (existsSync(d) ? checkLogsDir(root, d).ok : d === massgen));
}
