/** A place in a source file; lines and columns start at 1. */
export interface SourceSpan {
  file: string;
  line: number;
  column: number;
  /** Characters to underline on that line (at least 1). */
  length: number;
}

export interface Diagnostic {
  severity: 'error' | 'warning';
  message: string;
  span?: SourceSpan;
  /** Lines shown after the underline, e.g. a did-you-mean or a cycle path. */
  notes?: string[];
}
