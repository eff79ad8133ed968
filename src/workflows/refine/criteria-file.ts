import { readFileSync } from 'node:fs';
import { criterionText, normalizeCriteria, type Criterion } from './criteria.ts';
import { isRecord } from './json-extract.ts';

const EXAMPLE = '{"criteria": [{"text": "Correctness: ...", "category": "primary"}]}';

/** A user's criteria file that cannot be used; the message names the file, the place and the fix. */
export class CriteriaFileError extends Error {
  constructor(file: string, where: string, problem: string) {
    super(`${file}${where ? `: ${where}` : ''}: ${problem}`);
    this.name = 'CriteriaFileError';
  }
}

/**
 * refine's `{id, name, description, weight}` shape [derived mapping]: when no item has a category,
 * the highest weight becomes `primary` (first on ties), weights below half the maximum `stretch`.
 */
function categoriesFromWeights(items: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  if (items.some((item) => item.category !== undefined)) return items;
  const weights = items.map((item) => (typeof item.weight === 'number' ? item.weight : undefined));
  if (weights.every((w) => w === undefined)) return items;
  const max = Math.max(...weights.map((w) => w ?? 0));
  const top = weights.indexOf(max);
  return items.map((item, i) => {
    const w = weights[i];
    const category = i === top && max > 0 ? 'primary' : w !== undefined && w < max / 2 ? 'stretch' : 'standard';
    return { ...item, category };
  });
}

/** Accepts a bare array or `{"criteria": [...]}` of `{text|description|name, category?, ...}`. */
export function criteriaFromUserData(data: unknown, file: string): Criterion[] {
  const list = Array.isArray(data) ? data : isRecord(data) ? data.criteria : undefined;
  if (!Array.isArray(list))
    throw new CriteriaFileError(file, '', `expected a JSON array or an object with a "criteria" array, e.g. ${EXAMPLE}`);
  if (list.length === 0) throw new CriteriaFileError(file, 'criteria', 'is empty; give at least one criterion');
  list.forEach((item, index) => {
    if (!isRecord(item) || criterionText(item) === undefined)
      throw new CriteriaFileError(file, `criteria[${index}]`, `needs a non-empty "text" (or "description" / "name"), e.g. ${EXAMPLE}`);
  });
  return normalizeCriteria(categoriesFromWeights(list as Array<Record<string, unknown>>)).criteria;
}

export function loadUserCriteria(absolutePath: string, displayName: string): Criterion[] {
  let text: string;
  try {
    text = readFileSync(absolutePath, 'utf8');
  } catch (error) {
    throw new CriteriaFileError(
      displayName,
      '',
      `cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the criteria_file param`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CriteriaFileError(displayName, '', `is not valid JSON (${(error as Error).message})`);
  }
  return criteriaFromUserData(data, displayName);
}
