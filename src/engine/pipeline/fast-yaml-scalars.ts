// Scalar values for the fast YAML path (fast-yaml.ts): plain scalars typed as the yaml library's
// default YAML 1.2 core schema types them, and double-quoted escapes. Whatever is not certain
// throws (bail), and the caller leaves the document to the yaml library.

const BAIL: unique symbol = Symbol('fast-yaml: outside the subset');

/** Leaves the fast path: parseYamlFast catches this and returns undefined. */
export function bail(): never {
  throw BAIL;
}

const PLUS = 43;
const DASH = 45;
const DOT = 46;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
const TILDE = 126;

const INT = /^[-+]?[0-9]+$/;
const SAFE_INT = /^[-+]?(?:0|[1-9][0-9]*)$/;
const OCT_HEX = /^0o[0-7]+$|^0x[0-9a-fA-F]+$/;
const INF_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
const SIMPLE_FLOAT = /^[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$/;
/** Strings in YAML 1.2 that other YAML versions or tools read as numbers: not worth the doubt. */
const NUMBER_LIKE = /^[-+]?(?:0[bBoOxX]|[0-9]+(?::[0-9]+)+(?:\.[0-9]*)?$|[0-9._]*_[0-9._]*(?:[eE][-+]?[0-9_]+)?$)/;

function resolveNumber(raw: string): unknown {
  if (INT.test(raw)) {
    if (!SAFE_INT.test(raw)) bail();
    const n = parseInt(raw, 10);
    if (!Number.isSafeInteger(n)) bail();
    return n;
  }
  if (OCT_HEX.test(raw) || INF_NAN.test(raw)) bail();
  if (FLOAT_EXP.test(raw) || FLOAT.test(raw)) {
    if (!SIMPLE_FLOAT.test(raw)) bail();
    const n = parseFloat(raw);
    if (!Number.isFinite(n)) bail();
    return n;
  }
  if (NUMBER_LIKE.test(raw)) bail();
  return raw;
}

/** The value of a plain scalar under the YAML 1.2 core schema (as the yaml library resolves it). */
export function resolvePlain(raw: string): unknown {
  const c = raw.charCodeAt(0);
  switch (c) {
    case TILDE:
      return raw === '~' ? null : raw;
    case 110: // n
    case 78: // N
      return raw === 'null' || raw === 'Null' || raw === 'NULL' ? null : raw;
    case 116: // t
    case 84: // T
      return raw === 'true' || raw === 'True' || raw === 'TRUE' ? true : raw;
    case 102: // f
    case 70: // F
      return raw === 'false' || raw === 'False' || raw === 'FALSE' ? false : raw;
    case PLUS:
    case DASH:
    case DOT:
      return resolveNumber(raw);
    default:
      return c >= DIGIT_0 && c <= DIGIT_9 ? resolveNumber(raw) : raw;
  }
}

/** A mapping key as yaml-source.ts makes it: `String(scalar value)`. */
export function plainKey(raw: string): string {
  if (raw === '<<') bail(); // a merge key in some YAML versions
  return String(resolvePlain(raw));
}

function hexValue(s: string, start: number, length: number): number {
  let code = 0;
  for (let i = start; i < start + length; i += 1) {
    const c = s.charCodeAt(i);
    let digit: number;
    if (c >= DIGIT_0 && c <= DIGIT_9) digit = c - DIGIT_0;
    else if (c >= 97 && c <= 102) digit = c - 87;
    else if (c >= 65 && c <= 70) digit = c - 55;
    else return bail();
    code = code * 16 + digit;
  }
  return code;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '"': '"',
  '/': '/',
  '\\': '\\',
};

/** The escape sequence at s[i] (a backslash) in a double-quoted scalar: its text and the index after it. */
export function decodeEscape(s: string, i: number): { text: string; next: number } {
  const e = s[i + 1] ?? '';
  const simple = SIMPLE_ESCAPES[e];
  if (simple !== undefined) return { text: simple, next: i + 2 };
  if (e !== 'x' && e !== 'u' && e !== 'U') bail(); // \N \_ \L \P \<space>, a line break, unknown ones
  const length = e === 'x' ? 2 : e === 'u' ? 4 : 8;
  if (i + 2 + length > s.length) bail();
  const code = hexValue(s, i + 2, length);
  if (code > 0x10ffff) bail();
  return { text: String.fromCodePoint(code), next: i + 2 + length };
}
