// Serialises values the way Python's json module does, byte for byte:
// json.dump(obj, indent=2) (ensure_ascii on) for the .json files, and
// json.dumps(obj, ensure_ascii=False) for events.jsonl lines.
// Python distinguishes int from float; a JS number is written as an int, a PyFloat as a float.

export class PyFloat {
  constructor(readonly value: number) {}
}

/** Mark a number as a Python float (written as `1.0`, `0.0`, `1e-05`, ...). */
export const f = (value: number): PyFloat => new PyFloat(value);

export type PyValue = null | boolean | number | string | PyFloat | PyValue[] | { [key: string]: PyValue };

/** Python float repr: shortest round-trip digits, exponent form when exp < -4 or exp >= 16. */
export function pyFloatRepr(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`pyFloatRepr: non-finite value ${value}`);
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const [mantissa = '', expText = '0'] = value.toExponential().split('e');
  const exp = Number(expText);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = negative ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${body}e${exp < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}.0`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

function asciiOnly(json: string): string {
  let out = '';
  let start = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code > 0x7e) {
      out += json.slice(start, i) + (code === 0x7f ? '\x7f' : `\\u${code.toString(16).padStart(4, '0')}`);
      start = i + 1;
    }
  }
  return start === 0 ? json : out + json.slice(start);
}

export function pyString(text: string, ensureAscii: boolean): string {
  const json = JSON.stringify(text);
  return ensureAscii ? asciiOnly(json) : json;
}

function scalar(value: PyValue, ensureAscii: boolean): string | undefined {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error(`py-json: ${value} is not an int; wrap floats with f()`);
    return String(value);
  }
  if (typeof value === 'string') return pyString(value, ensureAscii);
  if (value instanceof PyFloat) return pyFloatRepr(value.value);
  return undefined;
}

function indented(value: PyValue, depth: number): string {
  const s = scalar(value, true);
  if (s !== undefined) return s;
  const pad = '  '.repeat(depth + 1);
  const close = '  '.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => pad + indented(v, depth + 1)).join(',\n')}\n${close}]`;
  }
  const entries = Object.entries(value as Record<string, PyValue>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${pad}${pyString(k, true)}: ${indented(v, depth + 1)}`).join(',\n')}\n${close}}`;
}

/** json.dump(value, fp, indent=2): no trailing newline. */
export function pyJsonIndent(value: PyValue): string {
  return indented(value, 0);
}

/** json.dumps(value, ensure_ascii=False): one line with ", " and ": " separators. */
export function pyJsonLine(value: PyValue): string {
  const s = scalar(value, false);
  if (s !== undefined) return s;
  if (Array.isArray(value)) return `[${value.map(pyJsonLine).join(', ')}]`;
  const entries = Object.entries(value as Record<string, PyValue>);
  return `{${entries.map(([k, v]) => `${pyString(k, false)}: ${pyJsonLine(v)}`).join(', ')}}`;
}
