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

  /**
   * The place of `name` (such as `vars.report`) in the value at `path`, where an expression there
   * reads it, so the underline is under the name; the whole value's place when it is not found.
   */
  spanOfName(path: ReadonlyArray<string | number>, name: string): SourceSpan {
    const base = this.span(path);
    const lines = this.text.split('\n');
    const pattern = new RegExp(`${name.replaceAll('.', '\\.')}(?![A-Za-z0-9_])`, 'g');
    const find = (line: string, from: number): number => {
      pattern.lastIndex = from;
      return pattern.exec(line)?.index ?? -1;
    };
    const first = lines[base.line - 1] ?? '';
    const column = find(first, base.column - 1);
    if (column >= 0) return { ...base, column: column + 1, length: name.length };
    // A block scalar (| or >): its lines follow, indented more than its key's line.
    if (!/^[|>]/.test(first.slice(base.column - 1))) return base;
    const indent = first.length - first.trimStart().length;
    for (let n = base.line; n < lines.length; n += 1) {
      const line = lines[n] ?? '';
      if (line.trim() !== '' && line.length - line.trimStart().length <= indent) break;
      const at = find(line, 0);
      if (at >= 0) return { file: base.file, line: n + 1, column: at + 1, length: name.length };
    }
    return base;
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
