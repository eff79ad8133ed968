import type { Criterion } from '../criteria.ts';

/** The criteria as the judges see them, in order (ids are positional). */
export function renderCriteria(criteria: readonly Criterion[]): string {
  return criteria
    .map((c) => {
      const lines = [`- **${c.id}** (${c.category}): ${c.text}`];
      if (c.anti_patterns?.length) lines.push(`  - anti-patterns: ${c.anti_patterns.join('; ')}`);
      if (c.verify_by) lines.push(`  - verify by: ${c.verify_by}`);
      if (c.score_anchors)
        lines.push(
          `  - anchors: ${Object.entries(c.score_anchors)
            .map(([k, v]) => `${k} = ${v}`)
            .join('; ')}`,
        );
      return lines.join('\n');
    })
    .join('\n');
}

/** The task and criteria sections every judging prompt starts with ('' parts are dropped later). */
export function taskAndCriteria(task: string | undefined, criteria: readonly Criterion[]): string[] {
  return [task ? `## Original task\n\n${task.trim()}\n` : '', '## Criteria', '', renderCriteria(criteria), ''];
}

/** The task, the criteria and the deliverable: what every judge of the deliverable reads first. */
export function judgingBrief(task: string | undefined, criteria: readonly Criterion[], deliverable: string): string[] {
  return [...taskAndCriteria(task, criteria), '## Deliverable', '', deliverable, ''];
}
