/** A place in a source file; lines and columns start at 1. */
export interface SourceSpan {
  file: string;
  line: number;
  column: number;
  /** Characters to underline on that line (at least 1). */
  length: number;
}

/** What a diagnostic is about, for programs and tests to match (`message` says it for people). */
export type DiagnosticCode =
  // Reading the file
  | 'unreadable-file'
  | 'not-text'
  | 'yaml-syntax'
  | 'yaml-alias'
  | 'duplicate-key'
  // The grammar
  | 'not-a-mapping'
  | 'unknown-key'
  | 'missing-key'
  | 'invalid-value'
  | 'invalid-stage-name'
  | 'stage-kind'
  | 'misplaced-key'
  | 'nested-loop'
  | 'bad-expression'
  // Names and paths
  | 'unknown-name'
  | 'unknown-stage'
  | 'unknown-param'
  | 'unknown-var'
  | 'var-cycle'
  | 'unknown-task'
  | 'unknown-schema'
  | 'unknown-pool'
  | 'duplicate-stage'
  | 'duplicate-output'
  | 'output-outside-project'
  | 'output-in-refinery-folder'
  | 'dependency-cycle'
  // Params, expansion and the run
  | 'invalid-param-default'
  | 'invalid-param'
  | 'missing-param'
  | 'expression-failed'
  | 'duplicate-foreach-key'
  | 'foreach-root-missing'
  | 'invalid-loop-max'
  | 'no-such-stage'
  | 'preflight-failed';

export interface Diagnostic {
  severity: 'error' | 'warning';
  code: DiagnosticCode;
  message: string;
  span?: SourceSpan;
  /** Lines shown after the underline, e.g. a did-you-mean or a cycle path. */
  notes?: string[];
  /**
   * Set when the cause is a path made from params (given on the command line or by their defaults),
   * so that an error about a pipeline the user does not own can speak of the param instead of the file.
   */
  paramPath?: ParamPathCause;
}

export interface ParamPathCause {
  /** The params the path is made from, with their values. */
  params: Record<string, unknown>;
  /** The path as made (relative to the project root or absolute). */
  path: string;
  problem: 'does not exist' | 'is not a folder' | 'cannot be read';
}
