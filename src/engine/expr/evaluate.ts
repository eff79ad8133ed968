import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Expr, Template } from '../types/expr.ts';
import { OutsideProjectError } from '../paths/inside-project.ts';

/** A value whose fields are computed on demand (artifacts read from disk, for example). */
export interface LazyRecord {
  readonly lazyRecord: true;
  get(key: string): unknown;
}

export function lazyRecord(get: (key: string) => unknown): LazyRecord {
  return { lazyRecord: true, get };
}

export class ExprEvalError extends Error {}

/** Longest string an expression may build (with `+`, pad, join, a template...): 1 MiB of text. */
export const MAX_RESULT_LENGTH = 1 << 20;
/** Most items a list an expression builds (split) may have. */
export const MAX_RESULT_ITEMS = 100_000;
/** Characters and list items one evaluation may build in all: `[pad('', 1000000), pad('', 1000000), ...]` stops here. */
export const MAX_BUILT_TOTAL = 8 * MAX_RESULT_LENGTH;

/** What the current evaluation has built so far; evaluation is synchronous, so one counter serves, reset at each entry point. */
let built = 0;

function spend(amount: number): void {
  built += amount;
  if (built > MAX_BUILT_TOTAL)
    throw new ExprEvalError(`the expression builds more than ${MAX_BUILT_TOTAL} characters and list items in all`);
}

function boundedText(text: string, what: string): string {
  if (text.length > MAX_RESULT_LENGTH)
    throw new ExprEvalError(`${what} would be ${text.length} characters long; the limit is ${MAX_RESULT_LENGTH}`);
  spend(text.length);
  return text;
}

export interface Scope {
  vars: Record<string, unknown>;
  /**
   * Functions that need the outside world, e.g. `exists(path)`: a path relative to the project
   * root, answered by existsInProject (paths/inside-project.ts), which refuses any path out of
   * the project (absolute, `..`, or through a symlink) with an error rather than an answer.
   */
  effects?: {
    exists?: (p: string) => boolean;
    /** `lines(path)`: a text file's non-empty lines, trimmed (a foreach's list only). */
    lines?: (p: string) => string[];
    /** `glob(patterns)`: the files a glob or a list of globs and paths names, sorted (a foreach's list only). */
    glob?: (patterns: string[]) => string[];
  };
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
  try {
    return JSON.stringify(value);
  } catch (error) {
    // A value nested deeper than the stack allows (an artifact read from disk, say).
    throw asEvalError(error);
  }
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

function pad(x: unknown, width: unknown): string {
  const n = Number(width ?? 3);
  if (n > MAX_RESULT_LENGTH) throw new ExprEvalError(`pad() to ${toText(width)} characters; the limit is ${MAX_RESULT_LENGTH}`);
  const text = toText(x);
  if (n > text.length) spend(n);
  return text.padStart(n, '0');
}

function split(x: unknown, sep: unknown): string[] {
  const parts = toText(x)
    .split(sep === undefined ? ',' : toText(sep))
    .filter((s) => s !== '');
  if (parts.length > MAX_RESULT_ITEMS)
    throw new ExprEvalError(`split() would make ${parts.length} items; the limit is ${MAX_RESULT_ITEMS}`);
  spend(parts.length);
  return parts;
}

/** min/max over numbers and lists of numbers, without spreading a list into arguments (a long one would overflow the stack). */
function extreme(pick: (a: number, b: number) => number, start: number, xs: unknown[]): number {
  let out = start;
  for (const x of xs) {
    if (Array.isArray(x)) for (const y of x) out = pick(out, Number(y));
    else out = pick(out, Number(x));
  }
  return out;
}

// A Map, not an object: a name like `constructor` or `__proto__` must not find Object.prototype's members.
type PureFunction = (...args: unknown[]) => unknown;

function contains(hay: unknown, needle: unknown): boolean {
  return Array.isArray(hay) ? hay.some((h) => equal(h, needle)) : toText(hay).includes(toText(needle));
}

/** `range(n)`: 0..n-1; `range(a, b)`: a..b-1. */
function range(a: unknown, b: unknown): number[] {
  const [from, to] = b === undefined ? [0, Math.trunc(Number(a))] : [Math.trunc(Number(a)), Math.trunc(Number(b))];
  if (!Number.isFinite(from) || !Number.isFinite(to)) throw new ExprEvalError('range() needs whole numbers');
  const n = Math.max(0, to - from);
  if (n > MAX_RESULT_ITEMS) throw new ExprEvalError(`range() would make ${n} items; the limit is ${MAX_RESULT_ITEMS}`);
  spend(n);
  return Array.from({ length: n }, (_, i) => from + i);
}

/** `product(a, b, ...)`: every combination, one list per combination, the first list varying slowest. */
function product(...lists: unknown[]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const list of lists) {
    const items = Array.isArray(list) ? list : [list];
    if (out.length * items.length > MAX_RESULT_ITEMS)
      throw new ExprEvalError(`product() would make ${out.length * items.length} items; the limit is ${MAX_RESULT_ITEMS}`);
    out = out.flatMap((prefix) => items.map((x) => [...prefix, x]));
  }
  spend(out.length);
  return out;
}

/** `hash(x, n)`: the first n (default 8) hex digits of the SHA-256 of x's text, for short stable names. */
function shortHash(x: unknown, n: unknown): string {
  const width = Math.min(64, Math.max(1, Math.trunc(Number(n ?? 8))));
  return createHash('sha256').update(toText(x)).digest('hex').slice(0, width);
}

const PURE_FUNCTIONS = new Map<string, PureFunction>(
  Object.entries<PureFunction>({
    len: (x) => (Array.isArray(x) || typeof x === 'string' ? x.length : x && typeof x === 'object' ? Object.keys(x).length : 0),
    lower: (x) => boundedText(toText(x).toLowerCase(), 'lower()'),
    upper: (x) => boundedText(toText(x).toUpperCase(), 'upper()'),
    basename: (x) => path.posix.basename(toText(x)),
    dirname: (x) => path.posix.dirname(toText(x)),
    join: (list, sep) =>
      boundedText(Array.isArray(list) ? list.map(toText).join(sep === undefined ? ',' : toText(sep)) : toText(list), 'join()'),
    split,
    default: (x, fallback) => (x === undefined || x === null || x === '' ? fallback : x),
    str: (x) => toText(x),
    int: (x) => Math.trunc(Number(x)),
    pad,
    contains,
    startsWith: (x, prefix) => toText(x).startsWith(toText(prefix)),
    endsWith: (x, suffix) => toText(x).endsWith(toText(suffix)),
    min: (...xs) => extreme(Math.min, Infinity, xs),
    max: (...xs) => extreme(Math.max, -Infinity, xs),
    range,
    product,
    hash: shortHash,
  }),
);

const EFFECT_FUNCTIONS = ['exists', 'lines', 'glob'];

export const FUNCTION_NAMES = [...PURE_FUNCTIONS.keys(), ...EFFECT_FUNCTIONS].sort();

export function isFunctionName(name: string): boolean {
  return EFFECT_FUNCTIONS.includes(name) || PURE_FUNCTIONS.has(name);
}

/** lines() and glob(): answered only where a foreach's list is made (the files it names are the stage's to read). */
function fileEffect(fn: 'lines' | 'glob', arg: unknown, scope: Scope): string[] {
  const effect = scope.effects?.[fn];
  if (!effect) throw new ExprEvalError(`${fn}() is available only in a foreach list`);
  try {
    const out =
      fn === 'lines'
        ? (effect as (p: string) => string[])(toText(arg))
        : (effect as (p: string[]) => string[])(Array.isArray(arg) ? arg.map(toText) : [toText(arg)]);
    if (out.length > MAX_RESULT_ITEMS) throw new ExprEvalError(`${fn}() would make ${out.length} items; the limit is ${MAX_RESULT_ITEMS}`);
    spend(out.length);
    return out;
  } catch (error) {
    if (error instanceof OutsideProjectError) throw new ExprEvalError(error.message);
    throw error;
  }
}

function arithmetic(op: string, a: unknown, b: unknown): unknown {
  if (op === '+') return typeof a === 'number' && typeof b === 'number' ? a + b : boundedText(toText(a) + toText(b), "the text '+' builds");
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
  if (expr.op === '&&') return truthy(evalNode(expr.left, scope)) && truthy(evalNode(expr.right, scope));
  if (expr.op === '||') {
    const left = evalNode(expr.left, scope);
    return truthy(left) ? left : evalNode(expr.right, scope);
  }
  const a = evalNode(expr.left, scope);
  const b = evalNode(expr.right, scope);
  switch (expr.op) {
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case 'in':
      return contains(b, a);
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
  const args = expr.args.map((a) => evalNode(a, scope));
  if (expr.fn === 'exists') {
    const exists = scope.effects?.exists;
    if (!exists) throw new ExprEvalError('exists() is not available here');
    try {
      return exists(toText(args[0]));
    } catch (error) {
      // Expressions look only inside the project: a path out of it fails the expression, saying so.
      if (error instanceof OutsideProjectError) throw new ExprEvalError(error.message);
      throw error;
    }
  }
  if (expr.fn === 'lines' || expr.fn === 'glob') return fileEffect(expr.fn, args[0], scope);
  const fn = PURE_FUNCTIONS.get(expr.fn);
  if (!fn) throw new ExprEvalError(`unknown function '${expr.fn}'`);
  return fn(...args);
}

function evalNode(expr: Expr, scope: Scope): unknown {
  switch (expr.t) {
    case 'lit':
      return expr.v;
    case 'list':
      return expr.items.map((e) => evalNode(e, scope));
    case 'ref':
      if (!Object.hasOwn(scope.vars, expr.name)) throw new ExprEvalError(`unknown name '${expr.name}'`);
      return scope.vars[expr.name];
    case 'get':
      return member(evalNode(expr.obj, scope), expr.key);
    case 'index':
      return member(evalNode(expr.obj, scope), toText(evalNode(expr.index, scope)));
    case 'unary':
      return expr.op === '!' ? !truthy(evalNode(expr.arg, scope)) : -Number(evalNode(expr.arg, scope));
    case 'binary':
      return binary(expr, scope);
    case 'cond':
      return truthy(evalNode(expr.test, scope)) ? evalNode(expr.then, scope) : evalNode(expr.else, scope);
    case 'call':
      return call(expr, scope);
  }
}

/**
 * The engine's own limits of JavaScript (the stack, the longest string), reached through values
 * read from outside such as a deeply nested artifact, are an ExprEvalError like any other.
 */
function asEvalError(error: unknown): unknown {
  return error instanceof RangeError
    ? new ExprEvalError(`a value is too large or too deeply nested to evaluate (${error.message})`)
    : error;
}

/** An expression's value; every failure is an ExprEvalError. */
export function evaluate(expr: Expr, scope: Scope): unknown {
  built = 0;
  try {
    return evalNode(expr, scope);
  } catch (error) {
    throw asEvalError(error);
  }
}

export function evaluateCondition(expr: Expr, scope: Scope): boolean {
  built = 0;
  try {
    return truthy(evalNode(expr, scope));
  } catch (error) {
    throw asEvalError(error);
  }
}

/** A template's value: the typed value of a lone `${expr}`, else the joined text. */
export function renderTemplate(template: Template, scope: Scope): unknown {
  const [only] = template.parts;
  built = 0;
  try {
    if (template.parts.length === 1 && only !== undefined && typeof only !== 'string') return evalNode(only, scope);
    return boundedText(
      template.parts.map((p) => (typeof p === 'string' ? p : toText(evalNode(p, scope)))).join(''),
      'the text the template builds',
    );
  } catch (error) {
    throw asEvalError(error);
  }
}

export function renderText(template: Template, scope: Scope): string {
  return toText(renderTemplate(template, scope));
}
