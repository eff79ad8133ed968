import type { Criterion } from './criteria.ts';

export const EXPORT_FORMATS = ['massgen-checklist', 'eval-criteria'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** One entry of the MassGen quality server's `sessions/<id>/criteria.json`. */
export interface ChecklistItem {
  id: string;
  text: string;
  category: Criterion['category'];
  rationale: string;
}

/**
 * The bare array MassGen's quality server keeps in `.massgen-quality/sessions/<id>/criteria.json`
 * (`generate_eval_criteria` stores `{id, text, category, rationale}` items); the server indexes it as a
 * list, so the wrapped `{criteria: [...]}` form makes it fail.
 */
export function toMassgenChecklist(criteria: readonly Criterion[]): ChecklistItem[] {
  return criteria.map((c) => ({ id: c.id, text: c.text, category: c.category, rationale: c.verify_by ? `Verify by: ${c.verify_by}` : '' }));
}

/**
 * The wrapped form `massgen --eval-criteria FILE` reads: `{criteria: [{text, category, anti_patterns?,
 * verify_by?, score_anchors?}]}`. MassGen gives ids by position, so none are written.
 */
export function toEvalCriteriaFile(criteria: readonly Criterion[]): { criteria: Array<Omit<Criterion, 'id'>> } {
  return {
    criteria: criteria.map((c) => ({
      text: c.text,
      category: c.category,
      ...(c.anti_patterns ? { anti_patterns: c.anti_patterns } : {}),
      ...(c.verify_by ? { verify_by: c.verify_by } : {}),
      ...(c.score_anchors ? { score_anchors: c.score_anchors } : {}),
    })),
  };
}

export function exportCriteria(criteria: readonly Criterion[], format: ExportFormat): unknown {
  return format === 'massgen-checklist' ? toMassgenChecklist(criteria) : toEvalCriteriaFile(criteria);
}
