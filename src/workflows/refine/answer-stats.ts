import type { SchemaVia } from '../backends/types.ts';
import type { UsageCall } from './usage.ts';

/** How the model answers came back over the session: schemas used, first tries that were usable, what degraded. */
export interface AnswerStats {
  /** First-try calls whose answer was checked (repairs and unchecked calls aside). */
  first_try: number;
  first_try_valid: number;
  repairs: number;
  /** The session's artifacts whose status is degraded (or criteria that fell back to the defaults). */
  degraded_artifacts: string[];
  backends: Array<{
    backend: string;
    calls: number;
    schema: Partial<Record<SchemaVia, number>>;
    first_try: number;
    first_try_valid: number;
  }>;
}

/** First tries are the calls whose tag is not a repair; a repair follows a first try that was unusable. */
export function answerStats(calls: readonly UsageCall[], degraded: readonly string[]): AnswerStats {
  const checked = calls.filter((c) => c.valid !== undefined && !c.tag.startsWith('repair-'));
  const byBackend = new Map<string, AnswerStats['backends'][number]>();
  for (const call of calls) {
    const entry = byBackend.get(call.backend) ?? { backend: call.backend, calls: 0, schema: {}, first_try: 0, first_try_valid: 0 };
    entry.calls += 1;
    if (call.schema) entry.schema[call.schema] = (entry.schema[call.schema] ?? 0) + 1;
    if (call.valid !== undefined && !call.tag.startsWith('repair-')) {
      entry.first_try += 1;
      if (call.valid) entry.first_try_valid += 1;
    }
    byBackend.set(call.backend, entry);
  }
  return {
    first_try: checked.length,
    first_try_valid: checked.filter((c) => c.valid).length,
    repairs: calls.filter((c) => c.tag.startsWith('repair-')).length,
    degraded_artifacts: [...degraded],
    backends: [...byBackend.values()].sort((a, b) => (a.backend < b.backend ? -1 : 1)),
  };
}
