import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EventBus } from '../events/bus.ts';
import { PACKAGE_ROOT } from '../paths/package-root.ts';
import type { PipelineSpec } from '../types/pipeline.ts';
import { Observations } from './observations.ts';
import { manifestFile, readManifest } from './run-manifest.ts';

/** What every run that keeps the no-op record shares: which runs may keep one, and how one carries over. */

let version: string | undefined;

/** refinery's version, part of every no-op record's key. */
export function refineryVersion(): string {
  version ??= (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return version;
}

/** A stage with `stale_if` may need a rerun with nothing changed on disk, so such pipelines always check fully. */
export function canSkipByStat(spec: PipelineSpec): boolean {
  return spec.stages.every((s) => (s.kind === 'loop' ? s.stages.every((t) => !t.staleIf) : !s.staleIf));
}

/** The stages this run reports skipped (a stage it did not look at again keeps its last status). */
export function skippedStages(bus: EventBus, previous: ReadonlyMap<string, string> | undefined): Map<string, string> {
  const skipped = new Map(previous);
  bus.subscribe((event) => {
    if (event.type !== 'stage-end') return;
    if (event.status === 'skipped') skipped.set(event.stage, event.reason ?? 'skipped');
    else skipped.delete(event.stage);
  });
  return skipped;
}

/** The last run's record for what this run did not look at again, this run's for the rest. */
export function mergeObservations(previous: Observations, current: Observations): Observations {
  const out = new Observations();
  for (const [k, v] of [...previous.files, ...current.files]) out.files.set(k, v);
  for (const [k, v] of [...previous.dirs, ...current.dirs]) out.dirs.set(k, v);
  for (const [k, v] of [...previous.probes, ...current.probes]) out.probes.set(k, v);
  return out;
}

/** The last run's record with this key, as observations to carry over; undefined when there is none (or it is damaged). */
export function previousRecord(
  root: string,
  pipelineFile: string,
  key: string,
): { observations: Observations; skipped: Map<string, string>; stages: string[] } | undefined {
  const record = readManifest(manifestFile(root, pipelineFile));
  if (!record || typeof record === 'string' || record.key !== key) return undefined;
  const observations = new Observations();
  for (const [f, stamp] of Object.entries(record.files)) {
    if (stamp !== null && !(Array.isArray(stamp) && stamp.length === 3)) return undefined;
    observations.files.set(f, stamp);
  }
  for (const [d, mtime] of Object.entries(record.dirs)) observations.dirs.set(d, mtime);
  for (const [p, answer] of Object.entries(record.probes)) observations.probes.set(p, answer);
  return { observations, skipped: new Map(Object.entries(record.skipped ?? {})), stages: record.stages };
}
