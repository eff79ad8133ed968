import { upstreamOf } from '../graph/graph.ts';

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
  const wanted = [...deps.keys()].filter((id) => only.some((o) => id === o || id.startsWith(`${o}[`) || stageOf(id) === o));
  return wanted.length === 0 ? undefined : upstreamOf(wanted, deps);
}
