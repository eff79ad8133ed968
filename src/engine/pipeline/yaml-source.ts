// Pipeline YAML enters here. js-yaml (YAML 1.2 core schema, aliases refused) gives the values;
// the yaml library is read only when a message needs a place: it locates nodes for spans, and
// when js-yaml refuses a file it reports every problem at once, each located. Both libraries are
// required on first use, so a run answered from the parse cache loads neither.
import { createRequire } from 'node:module';
import type { Alias, LineCounter, Node as YamlNode } from 'yaml';
import type { Diagnostic, SourceSpan } from '../types/source.ts';

const requireHere = createRequire(import.meta.url);
let yamlLibrary: typeof import('yaml') | undefined;
function yaml(): typeof import('yaml') {
  yamlLibrary ??= requireHere('yaml') as typeof import('yaml');
  return yamlLibrary;
}
let jsYamlLibrary: typeof import('js-yaml') | undefined;
function jsYaml(): typeof import('js-yaml') {
  jsYamlLibrary ??= requireHere('js-yaml') as typeof import('js-yaml');
  return jsYamlLibrary;
}

/** Plain data from a YAML file, with the place of every value and key by JSON pointer. */
export interface LocatedYaml {
  value: unknown;
  /** pointer -> span of the value; `pointer + '#key'` -> span of a mapping key. Computed on demand. */
  spans: { get(pointer: string): SourceSpan | undefined };
  diagnostics: Diagnostic[];
}

function escapeSegment(segment: string | number): string {
  return String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
}

export function pointerOf(path: ReadonlyArray<string | number>): string {
  return path.map((p) => `/${escapeSegment(p)}`).join('');
}

function spanOf(file: string, lines: LineCounter, text: string, range: readonly number[] | undefined | null): SourceSpan | undefined {
  if (!range) return undefined;
  const [start = 0, end = start] = range;
  const pos = lines.linePos(start);
  const lineEnd = text.indexOf('\n', start);
  const stop = Math.min(end, lineEnd < 0 ? text.length : lineEnd);
  return { file, line: pos.line, column: pos.col, length: Math.max(1, stop - start) };
}

interface ConvertContext {
  file: string;
  lines: LineCounter;
  text: string;
  /** Source offsets by pointer; made into lines and columns only for the few that get a message. */
  ranges: Map<string, readonly number[]>;
  diagnostics: Diagnostic[];
}

/** An alias is not expanded: it would otherwise become null here, and expanding it invites billion-laughs files. */
function reportAlias(node: Alias, ctx: ConvertContext): null {
  const span = spanOf(ctx.file, ctx.lines, ctx.text, node.range);
  ctx.diagnostics.push({
    severity: 'error',
    code: 'yaml-alias',
    message: `YAML: alias *${node.source}: anchors/aliases are not supported in pipeline files; repeat the value`,
    ...(span ? { span } : {}),
  });
  return null;
}

function convert(node: YamlNode | null | undefined, at: string, ctx: ConvertContext): unknown {
  if (!node) return null;
  if (node.range) ctx.ranges.set(at, node.range);
  if (yaml().isAlias(node)) return reportAlias(node, ctx);
  if (yaml().isMap(node)) {
    const out: Record<string, unknown> = {};
    // Duplicate keys are found here with a set: yaml's own check is quadratic in the map's size.
    const seen = new Set<string>();
    for (const pair of node.items) {
      const keyNode = pair.key as YamlNode | null;
      if (yaml().isAlias(keyNode)) reportAlias(keyNode, ctx);
      const key = yaml().isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const child = `${at}/${escapeSegment(key)}`;
      if (keyNode?.range) ctx.ranges.set(`${child}#key`, keyNode.range);
      if (seen.has(key)) {
        const keySpan = spanOf(ctx.file, ctx.lines, ctx.text, keyNode?.range);
        ctx.diagnostics.push({
          severity: 'error',
          code: 'duplicate-key',
          message: `YAML: Map keys must be unique; '${key}' appears more than once`,
          ...(keySpan ? { span: keySpan } : {}),
        });
      }
      seen.add(key);
      Object.defineProperty(out, key, {
        value: convert(pair.value as YamlNode | null, child, ctx),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  if (yaml().isSeq(node)) return node.items.map((item, i) => convert(item as YamlNode, `${at}/${i}`, ctx));
  if (yaml().isScalar(node)) return node.value;
  return null;
}

/**
 * Parses a YAML file: the value comes from js-yaml, and spans from the yaml library on the first
 * request (a file without problems never asks). A file js-yaml refuses gets the yaml library's
 * located diagnostics, or js-yaml's own reason at its place when yaml finds nothing wrong.
 */
export function parseLocatedYaml(file: string, text: string): LocatedYaml {
  let value: unknown;
  try {
    value = jsYaml().load(text, { schema: jsYaml().CORE_SCHEMA, maxAliases: 0 });
  } catch (error) {
    return refused(file, text, error);
  }
  let located: LocatedYaml | undefined;
  const spans = { get: (pointer: string) => (located ??= locateYaml(file, text)).spans.get(pointer) };
  return { value, spans, diagnostics: [] };
}

function refused(file: string, text: string, error: unknown): LocatedYaml {
  const located = locateYaml(file, text);
  if (located.diagnostics.some((d) => d.severity === 'error')) return located;
  // An empty file (or one of comments only): js-yaml refuses it, yaml reads null, and the loader
  // then says what a pipeline file must hold.
  if (located.value === null) return located;
  const mark = (error as { mark?: { line: number; column: number } }).mark;
  const reason = (error as { reason?: string }).reason ?? String(error);
  const span: SourceSpan = { file, line: (mark?.line ?? 0) + 1, column: (mark?.column ?? 0) + 1, length: 1 };
  return {
    ...located,
    diagnostics: [...located.diagnostics, { severity: 'error', code: 'yaml-syntax', message: `YAML: ${reason}`, span }],
  };
}

/** The yaml library's parse: every node located, every error and warning reported. */
export function locateYaml(file: string, text: string): LocatedYaml {
  const lines = new (yaml().LineCounter)();
  const doc = yaml().parseDocument(text, { lineCounter: lines, uniqueKeys: false, prettyErrors: false });
  const diagnostics: Diagnostic[] = [...doc.errors, ...doc.warnings].map((error) => {
    const [start = 0, end = start + 1] = error.pos;
    const span = spanOf(file, lines, text, [start, end]) as SourceSpan;
    const message = error.message.split('\n')[0] ?? error.message;
    return { severity: doc.errors.includes(error) ? 'error' : 'warning', code: 'yaml-syntax', message: `YAML: ${message}`, span };
  });
  const ranges = new Map<string, readonly number[]>();
  const value = convert(doc.contents as YamlNode | null, '', { file, lines, text, ranges, diagnostics });
  const spans = { get: (pointer: string) => spanOf(file, lines, text, ranges.get(pointer)) };
  return { value, spans, diagnostics };
}
