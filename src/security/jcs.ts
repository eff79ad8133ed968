// RFC 8785, the JSON Canonicalization Scheme: the exact bytes signed between machines (a job's events, worker messages).
// Numbers are written as ECMAScript writes a double and strings as JSON.stringify escapes them (both
// what JCS prescribes), object keys sorted by their UTF-16 code units (JavaScript's own string
// order). docs/jobs-signing.md holds the same rules in Python, for publishers written there.

/** Above this, a JSON number is no longer one exact integer on both ends (JavaScript holds doubles). */
const LARGEST_EXACT = Number.MAX_SAFE_INTEGER;

/** A lone UTF-16 surrogate: not a character, so it has no UTF-8 form to sign. */
const LONE_SURROGATE = /\p{Cs}/u;

/** The canonical JSON text of a JSON value; an undefined member is left out, as JSON.stringify does. */
export function canonicalize(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalize(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    // Array.prototype.sort without a comparer orders by UTF-16 code units, as RFC 8785 (3.2.3) asks.
    const keys = entries.map(([k]) => k).sort();
    const byKey = new Map(entries);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalize(byKey.get(k))}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Why `value` cannot be signed so that every publisher computes the same bytes (undefined when it
 * can): a number beyond ±(2^53 − 1), which JSON.parse has already rounded (12345678901234567890
 * arrives as 12345678901234567000), or a string with a lone surrogate. `at` names the place ('' at the top).
 */
export function canonicalProblem(value: unknown, at: string): string | undefined {
  if (typeof value === 'number') {
    return Math.abs(value) > LARGEST_EXACT
      ? `${at}: the number ${value} is beyond ±2^53 (${LARGEST_EXACT}), where a JSON number is no longer exact, so its signature cannot be checked; send it as a string`
      : undefined;
  }
  if (typeof value === 'string')
    return LONE_SURROGATE.test(value) ? `${at}: the text has a lone UTF-16 surrogate, which cannot be signed` : undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const problem = canonicalProblem(item, `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const place = at ? `${at}.${key}` : key;
      const problem = canonicalProblem(key, `the key ${JSON.stringify(key)} at ${at || 'the top'}`) ?? canonicalProblem(item, place);
      if (problem) return problem;
    }
  }
  return undefined;
}
