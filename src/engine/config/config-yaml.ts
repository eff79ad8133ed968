// How refinery.config.yaml is read into plain data, for every section's loader (backends, remote
// cache): a YAML error or an alias that expands too far comes back as one located message, never a
// throw from inside the YAML library.
import { isAlias, LineCounter, parseDocument, visit } from 'yaml';

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
