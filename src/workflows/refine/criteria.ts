import { isRecord } from './json-extract.ts';

export type CriterionCategory = 'primary' | 'standard' | 'stretch';

/** One evaluation criterion in MassGen's format; `id` is positional (E1..EN). */
export interface Criterion {
  id: string;
  text: string;
  category: CriterionCategory;
  anti_patterns?: string[];
  verify_by?: string;
  score_anchors?: Record<string, string>;
}

export interface CriteriaDocument {
  schema_version: '1';
  source: 'model' | 'user' | 'default';
  aspiration?: string;
  criteria: Criterion[];
  warnings?: string[];
}

/**
 * The fallback when generation fails. Like MassGen's `_DEFAULT_CRITERIA` (whose ids, categories and aspects
 * these keep: E1 requirements fidelity, E2 multi-level correctness, E3 per-part depth as the primary, E4
 * intentional craft), each names its anti-patterns and score anchors for 3/5/7/9. The wording is
 * refinery's own.
 */
export const DEFAULT_CRITERIA: readonly Criterion[] = [
  {
    id: 'E1',
    text: 'Requirements fidelity: the output does everything the task asks, completely and literally, with nothing required missing or misread.',
    category: 'standard',
    anti_patterns: [
      'a requirement quietly dropped or narrowed',
      'answering an easier question than the one asked',
      'placeholders left where the task wanted real content',
    ],
    score_anchors: {
      '3': 'several requirements are missing or misread',
      '5': 'the main requirements are met; some are partial or loosely read',
      '7': 'every requirement is met; a few only at the minimum',
      '9': 'every requirement is met exactly, including the easy-to-miss ones',
    },
  },
  {
    id: 'E2',
    text: 'Multi-level correctness: structure, content and experience are all correct; nothing is broken, wrong or misleading at any level.',
    category: 'standard',
    anti_patterns: [
      'it looks right but does not work when used',
      'facts, numbers or examples that were never checked',
      'a broken structure hidden behind good prose',
    ],
    score_anchors: {
      '3': 'visible errors at more than one level',
      '5': 'works on the main path; errors off it',
      '7': 'correct at every level, with minor slips',
      '9': 'correct at every level, and checked',
    },
  },
  {
    id: 'E3',
    text: 'Per-part depth: every part of the output, including the weakest one, shows real depth and care rather than a thin placeholder.',
    category: 'primary',
    anti_patterns: [
      'one polished part carrying several thin ones',
      'generic filler where specifics belong',
      'sections that restate the task instead of doing it',
    ],
    score_anchors: {
      '3': 'most parts are thin',
      '5': 'the strongest parts are solid; the weakest is a placeholder',
      '7': 'every part is substantive; the weakest is merely adequate',
      '9': 'even the weakest part would stand on its own',
    },
  },
  {
    id: 'E4',
    text: 'Intentional craft: choices look deliberate and opinionated; the result reads as designed rather than assembled from defaults.',
    category: 'standard',
    anti_patterns: ['template defaults left as they came', 'inconsistent style from part to part', 'decoration that serves no purpose'],
    score_anchors: {
      '3': 'assembled from defaults',
      '5': 'tidy but generic',
      '7': 'consistent, with visible deliberate choices',
      '9': 'every choice serves the purpose; nothing is there by accident',
    },
  },
];

/** MassGen's category mapping, legacy names included (must/core/should -> standard, could -> stretch). */
export function mapCategory(raw: unknown): CriterionCategory {
  const value = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
  if (value === 'primary') return 'primary';
  if (value === 'stretch' || value === 'could') return 'stretch';
  return 'standard';
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const items = value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
  return items.length > 0 ? items : undefined;
}

function anchors(value: unknown): Record<string, string> | undefined {
  if (!isRecord(value)) return undefined;
  const entries = Object.entries(value)
    .filter(([, v]) => typeof v === 'string' || typeof v === 'number')
    .map(([k, v]) => [k, String(v)] as const)
    .sort(([a], [b]) => Number(a) - Number(b) || (a < b ? -1 : 1));
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** `text || description || name` (MassGen's `criteria_from_inline` preference). */
export function criterionText(item: Record<string, unknown>): string | undefined {
  for (const key of ['text', 'description', 'name']) {
    const value = item[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/**
 * Normalizes raw items: ids reassigned positionally, categories mapped, at most one primary
 * (the first is kept, the others demoted to standard). Items must already have text.
 */
export function normalizeCriteria(items: ReadonlyArray<Record<string, unknown>>): { criteria: Criterion[]; demoted: number } {
  let primarySeen = false;
  let demoted = 0;
  const criteria = items.map((item, index): Criterion => {
    let category = mapCategory(item.category);
    if (category === 'primary') {
      if (primarySeen) {
        category = 'standard';
        demoted++;
      }
      primarySeen = true;
    }
    const criterion: Criterion = { id: `E${index + 1}`, text: criterionText(item) ?? '', category };
    const anti = stringList(item.anti_patterns);
    if (anti) criterion.anti_patterns = anti;
    if (typeof item.verify_by === 'string' && item.verify_by.trim() !== '') criterion.verify_by = item.verify_by.trim();
    const scoreAnchors = anchors(item.score_anchors);
    if (scoreAnchors) criterion.score_anchors = scoreAnchors;
    return criterion;
  });
  return { criteria, demoted };
}

export function criteriaIds(criteria: readonly Criterion[]): string[] {
  return criteria.map((c) => c.id);
}
