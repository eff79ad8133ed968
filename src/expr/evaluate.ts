import path from 'node:path';
import type { Expr, Template } from '../model/expr.ts';

/** A value whose fields are computed on demand (artifacts read from disk, for example). */
export interface LazyRecord {
  readonly lazyRecord: true;
  get(key: string): unknown;
}

export function lazyRecord(get: (key: string) => unknown): LazyRecord {
  return { lazyRecord: true, get };
}

export class ExprEvalError extends Error {}

export interface Scope {
  vars: Record<string, unknown>;
  /** Functions that need the outside world, e.g. `exists(path)`. */
  effects?: { exists?: (p: string) => boolean };
}

function isLazy(value: unknown): value is LazyRecord {
  return typeof value === 'object' && value !== null && (value as LazyRecord).lazyRecord === true;
}

function member(obj: unknown, key: string): unknown {
  if (isLazy(obj)) return obj.get(key);
  if (Array.isArray(obj)) {
    if (key === 'length') return obj.length;
    return /^\d+$/.test(key) ? obj[Number(key)] : undefined;
  }
  if (typeof obj === 'string' && key === 'length') return obj.length;
  if (typeof obj === 'object' && obj !== null && Object.hasOwn(obj, key)) return (obj as Record<string, unknown>)[key];
  return undefined;
}

export function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'object' && value !== null && typeof (value as { path?: unknown }).path === 'string') {
    return (value as { path: string }).path;
  }
  return JSON.stringify(value);
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return Boolean(value);
}

function equal(a: unknown, b: unknown): boolean {
  if (typeof a === 'object' && a !== null && 'path' in a) return equal(toText(a), b);
  if (typeof b === 'object' && b !== null && 'path' in b) return equal(a, toText(b));
  if ((a === undefined || a === null) && (b === undefined || b === null)) return true;
  return JSON.stringify(a) === JSON.stringify(b);
}

const PURE_FUNCTIONS: Record<string, (...args: unknown[]) => unknown> = {
  len: (x) => (Array.isArray(x) || typeof x === 'string' ? x.length : x && typeof x === 'object' ? Object.keys(x).length : 0),
  lower: (x) => toText(x).toLowerCase(),
  upper: (x) => toText(x).toUpperCase(),
  basename: (x) => path.posix.basename(toText(x)),
  dirname: (x) => path.posix.dirname(toText(x)),
  join: (list, sep) => (Array.isArray(list) ? list.map(toText).join(sep === undefined ? ',' : toText(sep)) : toText(list)),
  split: (x, sep) => toText(x).split(sep === undefined ? ',' : toText(sep)).filter((s) => s !== ''),
  default: (x, fallback) => (x === undefined || x === null || x === '' ? fallback : x),
  str: (x) => toText(x),
  int: (x) => Math.trunc(Number(x)),
  pad: (x, width) => toText(x).padStart(Number(width ?? 3), '0'),
  contains: (hay, needle) => (Array.isArray(hay) ? hay.some((h) => equal(h, needle)) : toText(hay).includes(toText(needle))),
  startsWith: (x, prefix) => toText(x).startsWith(toText(prefix)),
  endsWith: (x, suffix) => toText(x).endsWith(toText(suffix)),
  min: (...xs) => Math.min(...xs.flat().map(Number)),
  max: (...xs) => Math.max(...xs.flat().map(Number)),
};

export const FUNCTION_NAMES = [...Object.keys(PURE_FUNCTIONS), 'exists'].sort();

function arithmetic(op: string, a: unknown, b: unknown): unknown {
  if (op === '+') return typeof a === 'number' && typeof b === 'number' ? a + b : toText(a) + toText(b);
  const x = Number(a);
  const y = Number(b);
  if (op === '-') return x - y;
  if (op === '*') return x * y;
  if (op === '/') return x / y;
  return x % y;
}

function compare(op: string, a: unknown, b: unknown): boolean {
  const [x, y] = typeof a === 'number' || typeof b === 'number' ? [Number(a), Number(b)] : [toText(a), toText(b)];
  if (op === '<') return x < y;
  if (op === '<=') return x <= y;
  if (op === '>') return x > y;
  return x >= y;
}

function binary(expr: Extract<Expr, { t: 'binary' }>, scope: Scope): unknown {
  if (expr.op === '&&') return truthy(evaluate(expr.left, scope)) && truthy(evaluate(expr.right, scope));
  if (expr.op === '||') {
    const left = evaluate(expr.left, scope);
    return truthy(left) ? left : evaluate(expr.right, scope);
  }
  const a = evaluate(expr.left, scope);
  const b = evaluate(expr.right, scope);
  switch (expr.op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case 'in':
      return PURE_FUNCTIONS.contains?.(b, a);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compare(expr.op, a, b);
    default:
      return arithmetic(expr.op, a, b);
  }
}

function call(expr: Extract<Expr, { t: 'call' }>, scope: Scope): unknown {
  const args = expr.args.map((a) => evaluate(a, scope));
  if (expr.fn === 'exists') {
    const exists = scope.effects?.exists;
    if (!exists) throw new ExprEvalError('exists() is not available here');
    return exists(toText(args[0]));
  }
  const fn = PURE_FUNCTIONS[expr.fn];
  if (!fn) throw new ExprEvalError(`unknown function '${expr.fn}'`);
  return fn(...args);
}

export function evaluate(expr: Expr, scope: Scope): unknown {
  switch (expr.t) {
    case 'lit':
      return expr.v;
    case 'list':
      return expr.items.map((e) => evaluate(e, scope));
    case 'ref':
      if (!Object.hasOwn(scope.vars, expr.name)) throw new ExprEvalError(`unknown name '${expr.name}'`);
      return scope.vars[expr.name];
    case 'get':
      return member(evaluate(expr.obj, scope), expr.key);
    case 'index':
      return member(evaluate(expr.obj, scope), toText(evaluate(expr.index, scope)));
    case 'unary':
      return expr.op === '!' ? !truthy(evaluate(expr.arg, scope)) : -Number(evaluate(expr.arg, scope));
    case 'binary':
      return binary(expr, scope);
    case 'cond':
      return truthy(evaluate(expr.test, scope)) ? evaluate(expr.then, scope) : evaluate(expr.else, scope);
    case 'call':
      return call(expr, scope);
  }
}

export function evaluateCondition(expr: Expr, scope: Scope): boolean {
  return truthy(evaluate(expr, scope));
}

/** A template's value: the typed value of a lone `${expr}`, else the joined text. */
export function renderTemplate(template: Template, scope: Scope): unknown {
  const [only] = template.parts;
  if (template.parts.length === 1 && only !== undefined && typeof only !== 'string') return evaluate(only, scope);
  return template.parts.map((p) => (typeof p === 'string' ? p : toText(evaluate(p, scope)))).join('');
}

export function renderText(template: Template, scope: Scope): string {
  return toText(renderTemplate(template, scope));
}
