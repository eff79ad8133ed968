// How refinery.config.yaml is read into plain data, for every section's loader (backends, remote
// cache): a YAML error or an alias that expands too far comes back as one located message, never a
// throw from inside the YAML library.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isAlias, isMap, isNode, isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { didYouMean } from '../diagnostics/format.ts';

/** Nodes an alias may expand to in all, far above any honest config and far below a billion laughs. */
export const MAX_CONFIG_ALIAS_COUNT = 100;

export type ConfigYaml = { ok: true; data: unknown } | { ok: false; error: string };

/** `file:line:col` of the first alias, where an expansion bomb starts. */
function firstAlias(doc: ReturnType<typeof parseDocument>, counter: LineCounter, file: string): string {
  let where = file;
  visit(doc, {
    Alias(_key, node) {
      if (!isAlias(node) || !node.range) return undefined;
      const pos = counter.linePos(node.range[0]);
      where = `${file}:${pos.line}:${pos.col}: alias *${node.source}`;
      return visit.BREAK;
    },
  });
  return where;
}

/** Parses a config file's text; `file` is how messages name it (relative to the project root). */
export function parseConfigYaml(text: string, file: string): ConfigYaml {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    return { ok: false, error: `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: invalid YAML: ${first.message.split('\n')[0]}` };
  }
  try {
    return { ok: true, data: doc.toJS({ maxAliasCount: MAX_CONFIG_ALIAS_COUNT }) };
  } catch (error) {
    if (!(error instanceof ReferenceError)) throw error;
    return {
      ok: false,
      error: `${firstAlias(doc, counter, file)}: YAML aliases here expand to more than ${MAX_CONFIG_ALIAS_COUNT} nodes, which refinery refuses (it is how a billion-laughs file exhausts memory); write the values out instead of nesting aliases`,
    };
  }
}

/** `file:line:col` of the value at `at` (or of the key `key` in the map there), else of the nearest parent. */
export function located(file: string, text: string, at: readonly PropertyKey[], key?: string): string {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  const map = key === undefined ? undefined : doc.getIn(at as unknown[], true);
  const pair = isMap(map) ? map.items.find((p) => isScalar(p.key) && p.key.value === key) : undefined;
  if (isScalar(pair?.key) && pair.key.range) {
    const pos = counter.linePos(pair.key.range[0]);
    return `${file}:${pos.line}:${pos.col}`;
  }
  for (let depth = at.length; depth >= 0; depth--) {
    const node = doc.getIn(at.slice(0, depth) as unknown[], true);
    if (isNode(node) && node.range) {
      const pos = counter.linePos(node.range[0]);
      return `${file}:${pos.line}:${pos.col}`;
    }
  }
  return file;
}

/** What zod found wrong in section `section` of a config file, one located line per issue. */
export function sectionIssues(
  file: string,
  text: string,
  section: string,
  issues: ReadonlyArray<{ code: string; path: readonly PropertyKey[]; message: string; keys?: readonly string[] }>,
  allowed: readonly string[],
): string[] {
  return issues.map((issue) => {
    const at = [section, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys?.[0] as string;
      const hint = didYouMean(key, [...allowed]);
      return `${located(file, text, at, key)} ${at.map(String).join('.')}: unknown key '${key}'${hint ? `; did you mean '${hint}'?` : ''} (allowed: ${allowed.join(', ')})`;
    }
    return `${located(file, text, at)} ${at.map(String).join('.')}: ${issue.message}`;
  });
}

type SectionIssue = { code: string; path: readonly PropertyKey[]; message: string; keys?: readonly string[] };

/** A zod object schema, as far as reading a section needs it (zod itself enters elsewhere). */
export interface SectionSchema<T> {
  shape: object;
  safeParse(data: unknown): { success: true; data: T } | { success: false; error: { issues: readonly SectionIssue[] } };
}

/**
 * One section of a config file, checked by its schema; nothing when the file or the section is
 * absent, else the section or every problem of it, located (`what` names it in the message).
 */
export function readConfigSection<T>(
  root: string,
  file: string,
  section: string,
  schema: SectionSchema<T>,
  what: string,
): { config?: T; error?: string } {
  const absolute = path.resolve(root, file);
  if (!existsSync(absolute)) return {};
  const text = readFileSync(absolute, 'utf8');
  const read = parseConfigYaml(text, file);
  if (!read.ok) return { error: read.error };
  const data = read.data as Record<string, unknown> | null;
  if (!data || typeof data !== 'object' || data[section] === undefined || data[section] === null) return {};
  const parsed = schema.safeParse(data[section]);
  if (!parsed.success) {
    const lines = sectionIssues(file, text, section, parsed.error.issues, Object.keys(schema.shape));
    return { error: `invalid ${what} config:\n${lines.join('\n')}` };
  }
  return { config: parsed.data };
}
