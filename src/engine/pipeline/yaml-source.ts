// The yaml library enters the pipeline loader here, and only when a file needs it: most pipeline
// files parse with fast-yaml.ts, and loading the library costs ~25 ms of start-up (a no-op run
// never needs it).
import { createRequire } from 'node:module';
import type { Alias, LineCounter, Node as YamlNode } from 'yaml';
import type { Diagnostic, SourceSpan } from '../types/source.ts';
import { locateYamlFast, parseYamlFast } from './fast-yaml.ts';
import { escapeSegment } from './fast-yaml-locate.ts';

/** Plain data from a YAML file, with the place of every value and key by JSON pointer. */
let yamlLibrary: typeof import('yaml') | undefined;
function yaml(): typeof import('yaml') {
  yamlLibrary ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yamlLibrary;
}

export interface LocatedYaml {
  value: unknown;
  /** pointer -> span of the value; `pointer + '#key'` -> span of a mapping key. Computed on demand. */
  spans: { get(pointer: string): SourceSpan | undefined };
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
 * Parses a YAML file. The common subset takes a fast path (fast-yaml.ts) with no diagnostics; its
 * spans are worked out when the first one is asked for, by the fast scanner again (or by the yaml
 * library, for a text with CRLF line breaks or a key ending in `#key`).
 */
export function parseLocatedYaml(file: string, text: string): LocatedYaml {
  const fast = parseYamlFast(text);
  if (!fast) return parseLocatedYamlWithLibrary(file, text);
  let find: ((pointer: string) => SourceSpan | undefined) | undefined;
  const spans = { get: (pointer: string) => (find ??= fastSpanFinder(file, text))(pointer) };
  return { value: fast.value, spans, diagnostics: [] };
}

function fastSpanFinder(file: string, text: string): (pointer: string) => SourceSpan | undefined {
  const located = locateYamlFast(text);
  if (!located) {
    const full = parseLocatedYamlWithLibrary(file, text);
    return (pointer) => full.spans.get(pointer);
  }
  const lines = new (yaml().LineCounter)();
  lines.addNewLine(0);
  for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', nl + 1)) lines.addNewLine(nl + 1);
  return (pointer) => spanOf(file, lines, text, located.get(pointer));
}

/** The yaml library's parse: every value located, every error and warning reported. */
export function parseLocatedYamlWithLibrary(file: string, text: string): LocatedYaml {
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
