import { upstreamOf } from '../graph/graph.ts';

/** Whether an `--only` name asks for a node: its id, an instance of a foreach stage (`name[...]`), or an instance of a pipeline stage. */
function matches(id: string, name: string, stageOf: (id: string) => string | undefined): boolean {
  return id === name || id.startsWith(`${name}[`) || stageOf(id) === name;
}

/**
 * The nodes `--only` asks for, with everything they need: a name matches an instance id, the
 * instances of a foreach stage (`name[...]`), or every instance of a pipeline stage. Undefined
 * when a name matches nothing.
 */
export function onlySelection(
  deps: ReadonlyMap<string, readonly string[]>,
  only: readonly string[],
  stageOf: (id: string) => string | undefined,
): Set<string> | undefined {
  const wanted = [...deps.keys()].filter((id) => only.some((o) => matches(id, o, stageOf)));
  return wanted.length === 0 ? undefined : upstreamOf(wanted, deps);
}

/** The `--only` names that match no node, in the order given (checked before a run starts, so nothing is made for it). */
export function unmatchedOnly(ids: readonly string[], only: readonly string[], stageOf: (id: string) => string | undefined): string[] {
  return only.filter((o) => !ids.some((id) => matches(id, o, stageOf)));
}
