import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CommandIo } from './command.ts';
import type { Diagnostic } from '../engine/types/source.ts';
import type { PipelineSpec } from '../engine/types/pipeline.ts';
import { didYouMean, formatDiagnostics } from '../engine/diagnostics/format.ts';
import { loadPipelineCached } from '../engine/pipeline/cached-load.ts';
import { PACKAGE_ROOT, projectResolver, type NameResolver } from '../engine/pipeline/resolve-names.ts';
import { resolveParams } from '../engine/pipeline/params.ts';
import { expandPipeline, type Expansion } from '../engine/pipeline/expand.ts';
import { lazyRecord } from '../engine/expr/evaluate.ts';
import type { Observations } from '../engine/state/observations.ts';
import { stateWarn } from './state-report.ts';

export function useColor(io: CommandIo): boolean {
  return Boolean(io.stdout.isTTY) && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

export function printDiagnostics(io: CommandIo, diagnostics: readonly Diagnostic[], sources: Map<string, string>): void {
  const color = Boolean(io.stderr.isTTY) && io.env.NO_COLOR === undefined;
  io.stderr.write(formatDiagnostics(diagnostics, { sources, color, cwd: io.cwd }));
}

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
    return {
      error: `name a pipeline (${files.length ? `one of: ${files.map((f) => f.replace(/\.ya?ml$/, '')).join(', ')}` : 'no pipelines/ folder here'})`,
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
  const hint = didYouMean(arg, pipelineNames(root));
  return {
    error: `no pipeline '${arg}'${hint ? `; did you mean '${hint}'?` : ''} (pipelines/${arg}.yaml is neither in ${root} nor in refinery)`,
  };
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

export function parseParamFlags(values: readonly string[]): { params: Record<string, string>; error?: string } {
  const params: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) return { params, error: `--param ${v}: expected key=value` };
    params[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return { params };
}

export interface OpenedPipeline {
  spec: PipelineSpec;
  resolver: NameResolver;
  expansion: Expansion;
  params: Record<string, unknown>;
}

/** Loads, checks and expands a pipeline; prints located diagnostics and returns undefined on error. */
export async function openPipeline(
  io: CommandIo,
  arg: string | undefined,
  rawParams: readonly string[],
  observations?: Observations,
): Promise<OpenedPipeline | undefined> {
  const found = findPipelineFile(io.cwd, arg);
  if (!found.file) {
    io.stderr.write(`refinery: ${found.error}\n`);
    return undefined;
  }
  const resolver = projectResolver(io.cwd);
  const loaded = await loadPipelineCached(io.cwd, found.file, resolver, stateWarn(io));
  const sources = new Map([[found.file, loaded.text]]);
  if (!loaded.spec) {
    printDiagnostics(io, loaded.diagnostics, sources);
    return undefined;
  }
  const flags = parseParamFlags(rawParams);
  if (flags.error) {
    io.stderr.write(`refinery: ${flags.error}\n`);
    return undefined;
  }
  const exists = (rel: string): boolean => existsSync(path.resolve(io.cwd, rel));
  const { params, diagnostics } = resolveParams(loaded.spec, flags.params, {
    exists: (rel) => (observations ? observations.probe(rel, exists) : exists(rel)),
  });
  if (diagnostics.length) {
    printDiagnostics(io, diagnostics, sources);
    return undefined;
  }
  const expansion = expandPipeline(loaded.spec, {
    root: io.cwd,
    params,
    artifacts: lazyRecord(() => undefined),
    ...(observations ? { observations } : {}),
  });
  if (expansion.diagnostics.length) {
    printDiagnostics(io, expansion.diagnostics, sources);
    return undefined;
  }
  return { spec: loaded.spec, resolver, expansion, params };
}

export function readSource(file: string): string {
  try {
    // Read, then decoded: Node 20 reads a large file as UTF-8 text twice as slowly.
    return readFileSync(file).toString('utf8');
  } catch {
    return '';
  }
}
