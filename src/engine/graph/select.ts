// A small selection language over a stage graph (Dagster's, reduced): a word names stages,
// `+s` adds everything upstream of s, `s+` everything downstream, `2+s` / `s+2` limits the depth;
// `status:failed` picks by state; `and`, `or`, `not` combine (and binds tighter than or).
// `a+ and +b` is the path from a to b. Names match a stage id, its stage name (`turn` matches
// every `turn[...]`), or a `*` glob. Pure: the caller gives the graph and the states.

export interface SelectGraph {
  ids: readonly string[];
  deps: ReadonlyMap<string, readonly string[]>;
  dependents: ReadonlyMap<string, readonly string[]>;
}

export type SelectResult = { ok: true; ids: Set<string> } | { ok: false; error: string };

type Token = { kind: 'word'; text: string } | { kind: 'op'; op: 'and' | 'or' | 'not' };

function tokenize(query: string): Token[] {
  return query
    .trim()
    .split(/\s+/)
    .filter((w) => w.length > 0)
    .map((w) => (w === 'and' || w === 'or' || w === 'not' ? { kind: 'op', op: w } : { kind: 'word', text: w }));
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
}

/** The stage name of an instance id: `s[key]` → `s`, `loop#2.s` → `loop`. */
function stageName(id: string): string {
  const cut = [id.indexOf('#'), id.indexOf('[')].filter((i) => i > 0);
  return cut.length === 0 ? id : id.slice(0, Math.min(...cut));
}

function walk(start: Iterable<string>, edges: ReadonlyMap<string, readonly string[]>, limit: number): Set<string> {
  const seen = new Set(start);
  let frontier = [...seen];
  for (let depth = 0; depth < limit && frontier.length > 0; depth += 1) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const other of edges.get(id) ?? []) {
        if (seen.has(other)) continue;
        seen.add(other);
        next.push(other);
      }
    }
    frontier = next;
  }
  return seen;
}

function term(text: string, graph: SelectGraph, stateOf: (id: string) => string | undefined): Set<string> | string {
  const status = /^status:([a-z-]+)$/.exec(text);
  if (status) return new Set(graph.ids.filter((id) => stateOf(id) === status[1]));
  const m = /^(?:(\d*)\+)?([^+]+?)(?:\+(\d*))?$/.exec(text);
  if (!m) return `cannot read '${text}': write a stage name with optional +, e.g. +s, s+, 2+s`;
  const [, up, name, down] = m;
  const pattern = globToRegExp(name as string);
  const base = graph.ids.filter((id) => pattern.test(id) || pattern.test(stageName(id)));
  if (base.length === 0) return `no stage matches '${name}'`;
  let out = new Set(base);
  if (up !== undefined) out = new Set([...out, ...walk(base, graph.deps, up === '' ? Infinity : Number(up))]);
  if (down !== undefined) out = new Set([...out, ...walk(base, graph.dependents, down === '' ? Infinity : Number(down))]);
  return out;
}

/** Evaluates a query; an empty query selects every stage. */
export function selectStages(query: string, graph: SelectGraph, stateOf: (id: string) => string | undefined): SelectResult {
  const tokens = tokenize(query);
  if (tokens.length === 0) return { ok: true, ids: new Set(graph.ids) };
  const all = new Set(graph.ids);
  // or-of-ands: each alternative is a list of (possibly negated) terms.
  const alternatives: Array<Array<{ negate: boolean; ids: Set<string> }>> = [[]];
  let negate = false;
  let expectTerm = true;
  for (const token of tokens) {
    if (token.kind === 'op') {
      if (token.op === 'not') {
        if (!expectTerm) return { ok: false, error: "'not' must come before a term: a and not b" };
        negate = !negate;
        continue;
      }
      if (expectTerm) return { ok: false, error: `'${token.op}' needs a term before it` };
      if (token.op === 'or') alternatives.push([]);
      expectTerm = true;
      continue;
    }
    if (!expectTerm) return { ok: false, error: `missing 'and' or 'or' before '${token.text}'` };
    const ids = term(token.text, graph, stateOf);
    if (typeof ids === 'string') return { ok: false, error: ids };
    (alternatives[alternatives.length - 1] as Array<{ negate: boolean; ids: Set<string> }>).push({ negate, ids });
    negate = false;
    expectTerm = false;
  }
  if (expectTerm) return { ok: false, error: 'the query ends with an operator' };
  const result = new Set<string>();
  for (const terms of alternatives) {
    for (const id of all) if (terms.every((t) => t.ids.has(id) !== t.negate)) result.add(id);
  }
  return { ok: true, ids: result };
}
