import type { CommandIo } from './command.ts';
import type { Diagnostic } from '../engine/types/source.ts';
import type { PipelineSpec } from '../engine/types/pipeline.ts';
import { formatDiagnostics } from '../engine/diagnostics/format.ts';
import { loadPipelineCached } from '../engine/pipeline/cached-load.ts';
import { projectResolver, type NameResolver } from '../engine/pipeline/resolve-names.ts';
import { resolveParams } from '../engine/pipeline/params.ts';
import { expandPipeline, type Expansion } from '../engine/pipeline/expand.ts';
import { lazyRecord } from '../engine/expr/evaluate.ts';
import type { Observations } from '../engine/state/observations.ts';
import { stateWarn } from './state-report.ts';
import { isBuiltinPipeline, speakOfParams } from './builtin-pipeline.ts';
import { findPipelineFile, parseParamFlags } from './pipeline-file.ts';
import { existsInProject } from '../engine/paths/inside-project.ts';

export { findPipelineFile, parseParamFlags, readSource } from './pipeline-file.ts';

export function useColor(io: CommandIo): boolean {
  return Boolean(io.stdout.isTTY) && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

export function printDiagnostics(io: CommandIo, diagnostics: readonly Diagnostic[], sources: Map<string, string>): void {
  const color = Boolean(io.stderr.isTTY) && io.env.NO_COLOR === undefined;
  io.stderr.write(formatDiagnostics(diagnostics, { sources, color, cwd: io.cwd }));
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
  const exists = (rel: string): boolean => existsInProject(io.cwd, rel);
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
    const builtin = isBuiltinPipeline(found.file, io.cwd);
    printDiagnostics(io, builtin ? speakOfParams(expansion.diagnostics, flags.params, io.cwd) : expansion.diagnostics, sources);
    return undefined;
  }
  return { spec: loaded.spec, resolver, expansion, params };
}
