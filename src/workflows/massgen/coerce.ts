// Lenient accessors for JSON of unknown shape: a wrong type yields the fallback, never an exception.

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function obj(value: unknown): Json | null {
  return isObject(value) ? value : null;
}

export function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function num(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

export function int(value: unknown): number | null {
  const n = num(value);
  return n === null ? null : Math.trunc(n);
}

export function bool(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function strings(value: unknown): string[] {
  return arr(value).filter((item): item is string => typeof item === 'string');
}

/** Counts how many fields of `value` had a type other than expected, for one aggregated warning. */
export class TypeProblems {
  readonly fields: string[] = [];

  note(field: string, value: unknown, ok: boolean): void {
    if (!ok && value !== undefined && value !== null) this.fields.push(field);
  }

  expect<T>(field: string, value: unknown, read: (v: unknown) => T | null): T | null {
    const result = read(value);
    this.note(field, value, result !== null);
    return result;
  }

  summary(): string | null {
    if (this.fields.length === 0) return null;
    const shown = this.fields.slice(0, 5).join(', ');
    const more = this.fields.length > 5 ? ` and ${this.fields.length - 5} more` : '';
    return `unexpected value types in ${shown}${more}; those fields were ignored`;
  }
}

/** First `max` characters of a single-line preview. */
export function preview(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
