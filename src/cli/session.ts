// A command's side of the session's load phase: the pipeline it names, opened, or its errors printed.
import type { CommandIo } from './command.ts';
import type { Diagnostic } from '../engine/types/source.ts';
import { formatDiagnostics } from '../engine/diagnostics/format.ts';
import { findPipelineFile } from '../engine/session/find-pipeline.ts';
import { type LoadedPipeline, type LoadOutcome, loadPipeline } from '../engine/session/open-pipeline.ts';
import type { Observations } from '../engine/state/observations.ts';
import { stateWarn } from './state-report.ts';
import { isBuiltinPipeline, speakOfParams } from './builtin-pipeline.ts';
import { parseParamFlags } from './flags.ts';

export function useColor(io: CommandIo): boolean {
  return Boolean(io.stdout.isTTY) && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

export function printDiagnostics(io: CommandIo, diagnostics: readonly Diagnostic[], sources: Map<string, string>): void {
  const color = Boolean(io.stderr.isTTY) && io.env.NO_COLOR === undefined;
  io.stderr.write(formatDiagnostics(diagnostics, { sources, color, cwd: io.cwd }));
}

/** A pipeline that did not open, located; an error of a built-in pipeline's expansion is said of the params the user passed. */
export function printPipelineErrors(
  io: CommandIo,
  failed: Pick<Extract<LoadOutcome, { ok: false }>, 'file' | 'source' | 'diagnostics' | 'phase'>,
  passed: Readonly<Record<string, string>>,
): void {
  const builtin = failed.phase === 'expand' && isBuiltinPipeline(failed.file, io.cwd);
  printDiagnostics(
    io,
    builtin ? speakOfParams(failed.diagnostics, passed, io.cwd) : failed.diagnostics,
    new Map([[failed.file, failed.source]]),
  );
}

/** Loads, checks and expands the pipeline a command names; prints located diagnostics and returns undefined on error. */
export async function openPipeline(
  io: CommandIo,
  arg: string | undefined,
  rawParams: readonly string[],
  observations?: Observations,
): Promise<LoadedPipeline | undefined> {
  const found = findPipelineFile(io.cwd, arg);
  if (!found.file) {
    io.stderr.write(`refinery: ${found.error}\n`);
    return undefined;
  }
  const flags = parseParamFlags(rawParams);
  if (flags.error) {
    io.stderr.write(`refinery: ${flags.error}\n`);
    return undefined;
  }
  const opened = await loadPipeline(io.cwd, found.file, flags.params, {
    warn: stateWarn(io),
    strictParams: true,
    ...(observations ? { observations } : {}),
  });
  if (!opened.ok) {
    printPipelineErrors(io, opened, flags.params);
    return undefined;
  }
  return opened.pipeline;
}
