import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EventBus } from '../events/bus.ts';
import { PACKAGE_ROOT } from '../paths/package-root.ts';
import type { PipelineSpec } from '../types/pipeline.ts';
import type { NoopRecord } from './noop-record.ts';
import { manifestFile, PreviousRecord, readManifest } from './run-manifest.ts';

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

/** The stages this run found up to date: their `stale_if`, if any, was false on their outputs, which the run left as they were. */
export function freshStages(bus: EventBus): Set<string> {
  const fresh = new Set<string>();
  bus.subscribe((event) => {
    if (event.type === 'stage-end' && event.status === 'fresh') fresh.add(event.stage);
  });
  return fresh;
}

/** The last run's record with this key, to carry over what a run does not look at again; undefined when there is none (or it is damaged). */
export function lastRecord(root: string, pipelineFile: string, key: string): NoopRecord | undefined {
  const record = readManifest(manifestFile(root, pipelineFile));
  return record && typeof record !== 'string' && record.key === key ? record : undefined;
}

/** A record carried over whole, but for what `seen` has (a run's own stats stand). */
export function carryAll(record: NoopRecord): PreviousRecord {
  return new PreviousRecord(record, new Uint8Array(record.paths.length));
}
