// The yaml library enters the pipeline loader here.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { Diagnostic, SourceSpan } from '../model/source.ts';

/** Plain data from a YAML file, with the place of every value and key by JSON pointer. */
export interface LocatedYaml {
  value: unknown;
  /** pointer -> span of the value; `pointer + '#key'` -> span of a mapping key. */
  spans: Map<string, SourceSpan>;
  diagnostics: Diagnostic[];
}

export function pointerOf(path: ReadonlyArray<string | number>): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

function spanOf(file: string, lines: LineCounter, text: string, range: readonly number[] | undefined | null): SourceSpan | undefined {
  if (!range) return undefined;
  const [start = 0, end = start] = range;
  const pos = lines.linePos(start);
  const lineEnd = text.indexOf('\n', start);
  const stop = Math.min(end, lineEnd < 0 ? text.length : lineEnd);
  return { file, line: pos.line, column: pos.col, length: Math.max(1, stop - start) };
}

function convert(
  node: YamlNode | null | undefined,
  at: Array<string | number>,
  ctx: { file: string; lines: LineCounter; text: string; spans: Map<string, SourceSpan> },
): unknown {
  if (!node) return null;
  const span = spanOf(ctx.file, ctx.lines, ctx.text, node.range);
  if (span) ctx.spans.set(pointerOf(at), span);
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const keySpan = spanOf(ctx.file, ctx.lines, ctx.text, keyNode?.range);
      if (keySpan) ctx.spans.set(`${pointerOf([...at, key])}#key`, keySpan);
      Object.defineProperty(out, key, {
        value: convert(pair.value as YamlNode | null, [...at, key], ctx),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  if (isSeq(node)) return node.items.map((item, i) => convert(item as YamlNode, [...at, i], ctx));
  if (isScalar(node)) return node.value;
  return null;
}

export function parseLocatedYaml(file: string, text: string): LocatedYaml {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const diagnostics: Diagnostic[] = [...doc.errors, ...doc.warnings].map((error) => {
    const [start = 0, end = start + 1] = error.pos;
    const span = spanOf(file, lines, text, [start, end]) as SourceSpan;
    const message = error.message.split('\n')[0] ?? error.message;
    return { severity: doc.errors.includes(error) ? 'error' : 'warning', message: `YAML: ${message}`, span };
  });
  const spans = new Map<string, SourceSpan>();
  const value = convert(doc.contents as YamlNode | null, [], { file, lines, text, spans });
  return { value, spans, diagnostics };
}
