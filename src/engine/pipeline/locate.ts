import type { Diagnostic, DiagnosticCode, SourceSpan } from '../types/source.ts';
import { pointerOf, type LocatedYaml } from './yaml-source.ts';

/** Builds located diagnostics against one parsed YAML file. */
export class Locator {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    readonly file: string,
    readonly text: string,
    private readonly yaml: LocatedYaml,
  ) {}

  /** Whether the file has a value at this path. */
  has(path: ReadonlyArray<string | number>): boolean {
    return this.yaml.spans.get(pointerOf(path)) !== undefined;
  }

  span(path: ReadonlyArray<string | number>, which: 'value' | 'key' = 'value'): SourceSpan {
    const pointer = pointerOf(path);
    const exact = which === 'key' ? this.yaml.spans.get(`${pointer}#key`) : this.yaml.spans.get(pointer);
    if (exact) return exact;
    // Fall back to the nearest enclosing node that has a place.
    for (let n = path.length - 1; n >= 0; n -= 1) {
      const p = pointerOf(path.slice(0, n));
      const found = this.yaml.spans.get(`${p}#key`) ?? this.yaml.spans.get(p);
      if (found) return found;
    }
    return { file: this.file, line: 1, column: 1, length: 1 };
  }

  /** The span of a value, moved to `offset` characters into a string scalar (skipping its quote). */
  spanInString(path: ReadonlyArray<string | number>, offset: number, length = 1): SourceSpan {
    const base = this.span(path);
    const line = this.text.split('\n')[base.line - 1] ?? '';
    const quoted = line[base.column - 1] === '"' || line[base.column - 1] === "'";
    return { ...base, column: base.column + offset + (quoted ? 1 : 0), length };
  }

  error(
    code: DiagnosticCode,
    path: ReadonlyArray<string | number>,
    message: string,
    options: { which?: 'value' | 'key'; notes?: string[]; span?: SourceSpan } = {},
  ): void {
    this.diagnostics.push({
      severity: 'error',
      code,
      message,
      span: options.span ?? this.span(path, options.which),
      ...(options.notes ? { notes: options.notes } : {}),
    });
  }
}
