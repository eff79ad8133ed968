// Naming the pipeline a command runs, and reading source files: what a no-op run needs of the
// session, apart from the loading and expanding (open-pipeline.ts) it does without.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { didYouMean } from '../diagnostics/format.ts';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

/** A pipeline argument: a file path, or a name looked up in pipelines/ of the project, then refinery's. */
export function findPipelineFile(root: string, arg: string | undefined): { file?: string; error?: string } {
  if (arg === undefined) {
    const dir = path.join(root, 'pipelines');
    const files = existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
      : [];
    if (files.length === 1) return { file: path.join(dir, files[0] as string) };
    if (files.length > 0) return { error: `name a pipeline (one of: ${files.map((f) => f.replace(/\.ya?ml$/, '')).join(', ')})` };
    // A first contact: refinery's own pipelines run anywhere, and init writes a first one.
    return {
      error: `name a pipeline: none in ${existsSync(dir) ? 'pipelines/' : 'this folder (no pipelines/)'}; refinery's own: ${pipelineNames(root).sort().join(', ')}; \`npx refinery init\` writes a starter`,
    };
  }
  const direct = path.resolve(root, arg);
  if (existsSync(direct) && !arg.match(/^[a-z0-9-]+$/i)) return { file: direct };
  // A path (it has a slash or a YAML ending) is never looked up as a name.
  if (arg.includes('/') || /\.ya?ml$/.test(arg)) return { error: `no pipeline file ${arg}: no such file` };
  for (const base of [root, PACKAGE_ROOT]) {
    for (const ext of ['.yaml', '.yml']) {
      const file = path.join(base, 'pipelines', `${arg}${ext}`);
      if (existsSync(file)) return { file };
    }
  }
  if (existsSync(direct)) return { file: direct };
  const names = pipelineNames(root);
  const hint = didYouMean(arg, names);
  const choices = hint ? `; did you mean '${hint}'?` : names.length ? `; the pipelines are: ${names.sort().join(', ')}` : '';
  return { error: `no pipeline '${arg}'${choices} (pipelines/${arg}.yaml is neither in ${root} nor in refinery)` };
}

function pipelineNames(root: string): string[] {
  const names = new Set<string>();
  for (const base of [root, PACKAGE_ROOT]) {
    const dir = path.join(base, 'pipelines');
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (/\.ya?ml$/.test(f)) names.add(f.replace(/\.ya?ml$/, ''));
  }
  return [...names];
}

export function readSource(file: string): string {
  try {
    // Read, then decoded: Node 20 reads a large file as UTF-8 text twice as slowly.
    return readFileSync(file).toString('utf8');
  } catch {
    return '';
  }
}
