import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import { lazyRecord, type LazyRecord } from '../expr/evaluate.ts';

const MAX_TEXT = 1 << 20;

/** Reads artifacts for expressions: JSON files parsed, other files as text (up to 1 MiB). */
export class ArtifactReader {
  private readonly cache = new Map<string, unknown>();

  constructor(private readonly root: string) {}

  read(rel: string): unknown {
    if (this.cache.has(rel)) return this.cache.get(rel);
    const abs = path.join(this.root, rel);
    let value: unknown;
    try {
      if (rel.endsWith('.json')) value = JSON.parse(readFileSync(abs, 'utf8'));
      else if (statSync(abs).size <= MAX_TEXT) value = readFileSync(abs, 'utf8');
    } catch {
      value = undefined;
    }
    this.cache.set(rel, value);
    return value;
  }

  forget(rel: string): void {
    this.cache.delete(rel);
  }

  /** A stage's own outputs as they are on disk now: `self.OUTPUT`. */
  own(inst: StageInstance): LazyRecord {
    // hasOwn: `self.constructor` names no output, not Object.prototype's member.
    return lazyRecord((output) => {
      const o = Object.hasOwn(inst.outputs, output) ? inst.outputs[output] : undefined;
      return o ? this.read(o.path) : undefined;
    });
  }

  /** `artifacts.STAGE.OUTPUT` over the given instances: one record, or a list for a foreach stage. */
  view(instances: readonly StageInstance[]): LazyRecord {
    return lazyRecord((stageId) => {
      let matching = instances.filter((i) => i.stageId === stageId);
      if (matching.length === 0) return undefined;
      // Inside a loop a stage sees its own iteration's instances, or else the latest iteration's.
      const latest = matching.reduce((most, i) => Math.max(most, i.loop?.iteration ?? 0), 0);
      matching = matching.filter((i) => (i.loop?.iteration ?? 0) === latest);
      const records = matching.map((inst) =>
        lazyRecord((output) => {
          const o = Object.hasOwn(inst.outputs, output) ? inst.outputs[output] : undefined;
          return o ? this.read(o.path) : undefined;
        }),
      );
      return matching.length === 1 && !matching[0]?.spec.foreach ? records[0] : records;
    });
  }
}
