import { criteriaFromUserData, loadUserCriteria } from './criteria-file.ts';
import type { Criterion } from './criteria.ts';
import { resolveInside } from './safe-path.ts';

/** Reads a criteria.json written by generate-criteria (or any MassGen criteria file) from a param path. */
export function readCriteriaParam(root: string, given: string): Criterion[] {
  return loadUserCriteria(resolveInside(root, given, 'criteria path'), given);
}

export { criteriaFromUserData };
