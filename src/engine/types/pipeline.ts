import type { Expr, Template } from './expr.ts';
import type { SourceSpan } from './source.ts';

export type ParamType = 'string' | 'number' | 'integer' | 'boolean' | 'list';

export interface ParamSpec {
  type: ParamType;
  default?: unknown;
  description?: string;
  enum?: unknown[];
}

export interface OutputSpec {
  path: Template;
  schema?: string;
}

export type ForeachSpec =
  | { kind: 'list'; items: Template | unknown[] }
  /** `allowEmpty`: the glob's fixed leading folder may be missing (no items) instead of an error. */
  | { kind: 'glob'; patterns: Template[]; type: 'file' | 'dir'; allowEmpty?: true };

export interface RetrySpec {
  attempts: number;
  backoffMs: number;
}

interface StageBase {
  id: string;
  description?: string;
  inputs: Template[];
  outputs: Record<string, OutputSpec>;
  needs: string[];
  foreach?: ForeachSpec;
  as: string;
  when?: Expr;
  /** Checked on an otherwise up-to-date stage over its own outputs (`self.OUTPUT...`): true reruns it. */
  staleIf?: Expr;
  /**
   * Checked over its own outputs after a run: true says the stage's input files are final (a
   * finished MassGen turn), so the no-op record keeps only their folders' listings, not each
   * file's stat. A file added or removed is still seen; a rewrite in place is not.
   */
  finalIf?: Expr;
  pool?: string;
  timeoutMs?: number;
  /** `local: true`: never dispatched to a remote worker. */
  local?: true;
  retry: RetrySpec;
  env: Record<string, Template>;
  /** Where the stage's key is in the pipeline file, for messages. */
  span?: SourceSpan;
}

export interface TaskStageSpec extends StageBase {
  kind: 'task';
  task: string;
  with: Record<string, Template | unknown>;
}

export interface RunStageSpec extends StageBase {
  kind: 'run';
  /** A shell script whose ${...} parts are quoted, or an argv array run without a shell. */
  run: { shell: Template } | { argv: Template[] };
}

export interface LoopSpec {
  kind: 'loop';
  id: string;
  description?: string;
  needs: string[];
  max: Template | number;
  until?: Expr;
  stages: StageSpec[];
  span?: SourceSpan;
}

export type StageSpec = TaskStageSpec | RunStageSpec;

/** A named value (`vars:`): templates over params, pipeline and other vars, computed once per run. */
export interface VarSpec {
  /** A template, or plain data whose strings may be templates (as a task's `with:` values). */
  value: unknown;
  /** Where the var's name is in the pipeline file, for messages. */
  span?: SourceSpan;
}
export type StageOrLoop = StageSpec | LoopSpec;

export interface PipelineSpec {
  name: string;
  description?: string;
  /** Absolute path of the pipeline file. */
  file: string;
  /** Content hash of the pipeline file. */
  hash: string;
  params: Record<string, ParamSpec>;
  vars: Record<string, VarSpec>;
  pools: Record<string, number>;
  stages: StageOrLoop[];
}
