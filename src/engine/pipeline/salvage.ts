import type { z } from 'zod';

/**
 * The part of a value that a schema accepts, once every field an issue points at is dropped.
 * A stage with a typo'd key or one malformed field is still checked for its task, needs, params
 * and expressions, so every error of a pipeline file is reported in one pass. Only called after
 * the real parse failed and its issues were reported; the salvaged value never runs.
 */
export function salvage<T>(schema: z.ZodType<T>, value: unknown, maxPasses = 4): T | undefined {
  let current = value;
  for (let pass = 0; pass < maxPasses; pass++) {
    const parsed = schema.safeParse(current);
    if (parsed.success) return parsed.data;
    const next = structuredClone(current) as Record<string, unknown>;
    let dropped = false;
    for (const issue of parsed.error.issues) {
      const at = issue.code === 'unrecognized_keys' ? [...issue.path, ...issue.keys] : issue.path;
      dropped = dropAt(next, at) || dropped;
    }
    if (!dropped) return undefined;
    current = next;
  }
  return undefined;
}

/** Deletes the field at `at` (an object key; a list element is never removed, its holder is). */
function dropAt(root: Record<string, unknown>, at: ReadonlyArray<PropertyKey>): boolean {
  if (at.length === 0) return false;
  let holder: unknown = root;
  let i = 0;
  for (; i < at.length - 1; i++) {
    const child = (holder as Record<PropertyKey, unknown>)[at[i] as PropertyKey];
    if (Array.isArray(child) || child === null || typeof child !== 'object') break;
    holder = child;
  }
  const key = at[i] as PropertyKey;
  if (holder === null || typeof holder !== 'object' || Array.isArray(holder) || !Object.hasOwn(holder, key)) return false;
  delete (holder as Record<PropertyKey, unknown>)[key];
  return true;
}
