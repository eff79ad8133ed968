// Files a run of a given MassGen version must have (spec §1.1, §6). A missing one is a warning: the
// tree was cut short, cleaned up or copied partially.
import type { Entry } from './fs-safe.ts';
import type { RunData, WarningSink } from './model.ts';

/** [major, minor, patch] from massgen_version, or inferred from the files present (spec §6 recipe). */
export function detectVersion(run: RunData, names: Set<string>): [number, number, number] | null {
  const v = /^(\d+)\.(\d+)\.(\d+)/.exec(run.metadata?.massgenVersion ?? '');
  if (v) return [Number(v[1]), Number(v[2]), Number(v[3])];
  if (names.has('events.jsonl')) return [0, 1, 46];
  if (names.has('streaming_debug.log')) return [0, 1, 27];
  if (names.has('metrics_summary.json')) return [0, 1, 24];
  if (names.has('status.json')) return [0, 1, 8];
  return null;
}

const atLeast = (v: [number, number, number] | null, minor: number): boolean =>
  v !== null && (v[0] > 0 || v[1] > 1 || (v[1] === 1 && v[2] >= minor));

export function checkExpectedFiles(run: RunData, entries: Entry[], warn: WarningSink, relDir: string): void {
  const names = new Set(entries.filter((e) => e.kind === 'file').map((e) => e.name));
  if (names.size === 0 && run.snapshots.length === 0) return;
  const at = (name: string): string => (relDir === '.' ? name : `${relDir}/${name}`);
  const missing = (name: string, why: string): void => warn(at(name), 'missing', `${name} is missing (${why})`);
  const version = detectVersion(run, names);
  if (!names.has('execution_metadata.yaml')) missing('execution_metadata.yaml', 'MassGen writes it at the start of every run since v0.1.0');
  if (atLeast(version, 8) && !names.has('status.json')) missing('status.json', 'written every 2 s since v0.1.8');
  if (atLeast(version, 46) && !names.has('events.jsonl') && !names.has('massgen_debug.log'))
    missing('events.jsonl', 'written in non-debug runs since v0.1.46');
  if (atLeast(version, 32) && !names.has('massgen.log') && !names.has('massgen_debug.log'))
    missing('massgen.log', 'written per attempt since v0.1.32');
  const endFiles = [
    'coordination_events.json',
    'coordination_table.txt',
    ...(atLeast(version, 24) ? ['metrics_summary.json', 'metrics_events.json'] : []),
  ];
  const present = endFiles.filter((n) => names.has(n));
  if (present.length > 0 || run.finalAgents.length > 0) {
    for (const name of endFiles)
      if (!names.has(name)) missing(name, `the run ended (${present[0] ?? 'final/'} exists) but this end-of-run file was not found`);
    if (run.snapshots.length > 0 && !names.has('snapshot_mappings.json'))
      missing('snapshot_mappings.json', 'snapshots exist and the run ended');
  }
  if (atLeast(version, 37)) {
    for (const snap of run.snapshots)
      if (snap.trace === null) warn(snap.relDir, 'missing', 'no execution_trace.md (written into every snapshot since v0.1.37)');
  }
}
