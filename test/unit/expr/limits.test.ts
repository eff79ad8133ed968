import { describe, expect, it } from 'vitest';
import type { Expr } from '../../../src/engine/types/expr.ts';
import { MAX_EXPR_DEPTH, MAX_EXPR_LENGTH, parseExpr } from '../../../src/engine/expr/parse.ts';
import { parseTemplate } from '../../../src/engine/expr/template.ts';
import { constantErrors } from '../../../src/engine/expr/constant.ts';
import {
  evaluate,
  ExprEvalError,
  FUNCTION_NAMES,
  MAX_BUILT_TOTAL,
  MAX_RESULT_ITEMS,
  MAX_RESULT_LENGTH,
  renderTemplate,
  toText,
} from '../../../src/engine/expr/evaluate.ts';
import { ExprSyntaxError, tokenize } from '../../../src/engine/expr/tokenize.ts';

const scope = (vars: Record<string, unknown> = {}) => ({ vars, effects: { exists: () => false } });
const ev = (text: string, vars: Record<string, unknown> = {}) => evaluate(parseExpr(text), scope(vars));

function syntaxError(text: string): ExprSyntaxError {
  try {
    parseExpr(text);
  } catch (error) {
    if (error instanceof ExprSyntaxError) return error;
    throw error;
  }
  throw new Error(`'${text.slice(0, 40)}' parsed`);
}

/** A value nested far deeper than any stack: what JSON.parse gives for a hostile artifact. */
const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`) as unknown;

describe('expression functions', () => {
  it('parseExpr - a name that is not a documented function is an error at the name', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty', 'eval']) {
      const error = syntaxError(`1 + ${name}(params.p)`);
      expect(error.message).toContain(`unknown function '${name}'`);
      expect(error.offset).toBe(4);
    }
  });

  it('parseExpr - every documented function is callable', () => {
    expect(FUNCTION_NAMES).toEqual([
      'basename',
      'contains',
      'default',
      'dirname',
      'endsWith',
      'exists',
      'glob',
      'hash',
      'int',
      'join',
      'len',
      'lines',
      'lower',
      'max',
      'min',
      'pad',
      'product',
      'range',
      'split',
      'startsWith',
      'str',
      'upper',
    ]);
    for (const name of FUNCTION_NAMES) expect(() => parseExpr(`${name}('a', 'b')`)).not.toThrow();
  });

  it("evaluate - a call naming Object.prototype's members is an ExprEvalError, not a call", () => {
    // Such a tree cannot come from parseExpr any more, but it could come from an old parse cache.
    for (const fn of ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty']) {
      const expr: Expr = { t: 'call', fn, args: [{ t: 'lit', v: 1 }] };
      expect(() => evaluate(expr, scope())).toThrow(ExprEvalError);
    }
  });
});

describe('expression size limits', () => {
  it(`parseExpr - nesting up to ${MAX_EXPR_DEPTH} levels is accepted, one more is an error`, () => {
    const parens = (n: number) => `${'('.repeat(n)}1${')'.repeat(n)}`;
    expect(ev(parens(MAX_EXPR_DEPTH - 1))).toBe(1);
    expect(syntaxError(parens(MAX_EXPR_DEPTH)).message).toMatch(/nested too deeply/);
    const chain = (n: number) => Array.from({ length: n }, () => '1').join('+');
    expect(ev(chain(MAX_EXPR_DEPTH))).toBe(MAX_EXPR_DEPTH);
    expect(syntaxError(chain(MAX_EXPR_DEPTH + 1)).message).toMatch(/nested too deeply/);
  });

  it('parseExpr - 800 nested parentheses are an error at the 101st, not a stack overflow', () => {
    const error = syntaxError(`${'('.repeat(800)}1${')'.repeat(800)}`);
    expect(error.message).toMatch(/nested too deeply \(more than 100 levels/);
    expect(error.offset).toBe(MAX_EXPR_DEPTH);
  });

  it('parseExpr - a 5,000-term + chain is an error at the 100th +', () => {
    const text = Array.from({ length: 5000 }, () => '1').join('+');
    const error = syntaxError(text);
    expect(error.message).toMatch(/nested too deeply/);
    expect(error.offset).toBe(2 * MAX_EXPR_DEPTH - 1);
  });

  it('parseExpr - long chains of !, fields and indexes are depth errors', () => {
    expect(syntaxError(`${'!'.repeat(5000)}1`).message).toMatch(/nested too deeply/);
    expect(syntaxError(`x${'.a'.repeat(3000)}`).message).toMatch(/nested too deeply/);
    expect(syntaxError(`x${'[0]'.repeat(3000)}`).message).toMatch(/nested too deeply/);
    expect(syntaxError(`${'-'.repeat(5000)}1`).message).toMatch(/nested too deeply/);
  });

  it(`parseExpr - an expression longer than ${MAX_EXPR_LENGTH} characters is an error`, () => {
    expect(syntaxError(`${'!'.repeat(100_000)}1`).message).toBe(`expression is 100001 characters long; the limit is ${MAX_EXPR_LENGTH}`);
    expect(syntaxError(`a${'-'.repeat(100_000)}b`).message).toMatch(/characters long/);
    expect(ev(`'${'x'.repeat(MAX_EXPR_LENGTH - 2)}'`)).toHaveLength(MAX_EXPR_LENGTH - 2);
  });

  it('parseTemplate - a too long ${...} is reported at its start', () => {
    expect(() => parseTemplate(`echo \${${'1+'.repeat(MAX_EXPR_LENGTH)}1}`)).toThrow(expect.objectContaining({ offset: 7 }));
  });

  it('tokenize - a 200,000-dash identifier takes linear time', () => {
    const started = performance.now();
    const tokens = tokenize(`a${'-'.repeat(200_000)}b`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(tokens.map((t) => t.k)).toEqual(['id', 'end']);
    // A trailing dash is still a minus operator.
    expect(tokenize('a-- b').map((t) => ('v' in t ? t.v : t.k))).toEqual(['a', '-', '-', 'b', 'end']);
    expect(tokenize('some-name-2 - 1').map((t) => ('v' in t ? t.v : t.k))).toEqual(['some-name-2', '-', 1, 'end']);
  });

  it(`evaluate - pad beyond ${MAX_RESULT_LENGTH} characters is an ExprEvalError`, () => {
    expect(() => ev("pad('x', 600000000)")).toThrow(ExprEvalError);
    expect(() => ev("pad('x', 100000000)")).toThrow(/pad\(\) to 100000000 characters; the limit is 1048576/);
    expect(() => ev("pad('x', n)", { n: 1e8 })).toThrow(ExprEvalError);
    expect(ev(`pad('x', ${MAX_RESULT_LENGTH})`)).toHaveLength(MAX_RESULT_LENGTH);
  });

  it('evaluate - text built by +, join, upper or a template is bounded', () => {
    const half = 'x'.repeat(MAX_RESULT_LENGTH / 2 + 1);
    expect(() => ev('s + s', { s: half })).toThrow(ExprEvalError);
    expect(() => ev("join([s, s], '')", { s: half })).toThrow(ExprEvalError);
    expect(() => ev('upper(s)', { s: 'ß'.repeat(MAX_RESULT_LENGTH / 2 + 1) })).toThrow(ExprEvalError);
    expect(() => renderTemplate(parseTemplate('${s}${s}'), scope({ s: half }))).toThrow(ExprEvalError);
    expect(ev('len(s + "")', { s: half })).toBe(half.length);
  });

  it(`evaluate - split into more than ${MAX_RESULT_ITEMS} items is an ExprEvalError`, () => {
    expect(() => ev("split(s, '')", { s: 'x'.repeat(MAX_RESULT_ITEMS + 1) })).toThrow(
      'split() would make 100001 items; the limit is 100000',
    );
    expect(ev("len(split(s, ''))", { s: 'x'.repeat(MAX_RESULT_ITEMS) })).toBe(MAX_RESULT_ITEMS);
    // Empty pieces are dropped before counting.
    expect(ev("split(s, ',')", { s: `${','.repeat(MAX_RESULT_ITEMS * 2)}a` })).toEqual(['a']);
  });

  it(`evaluate - one evaluation builds at most ${MAX_BUILT_TOTAL} characters and items in all`, () => {
    const pads = (n: number) => `[${Array.from({ length: n }, () => `pad('', ${MAX_RESULT_LENGTH})`).join(', ')}]`;
    expect(ev(`len(${pads(MAX_BUILT_TOTAL / MAX_RESULT_LENGTH)})`)).toBe(8);
    expect(() => ev(pads(MAX_BUILT_TOTAL / MAX_RESULT_LENGTH + 1))).toThrow(/builds more than 8388608 characters and list items in all/);
    expect(() => ev(`[${Array.from({ length: 100 }, () => "split(s, '')").join(', ')}]`, { s: 'x'.repeat(MAX_RESULT_ITEMS) })).toThrow(
      ExprEvalError,
    );
    // The count starts again at each evaluation.
    for (let i = 0; i < 20; i += 1) expect(ev(`len(pad('', ${MAX_RESULT_LENGTH}))`)).toBe(MAX_RESULT_LENGTH);
  });

  it('evaluate - min and max of a 200,000-number list do not overflow the stack', () => {
    const xs = Array.from({ length: 200_000 }, (_, i) => i);
    expect(ev('min(xs)', { xs })).toBe(0);
    expect(ev('max(xs, 7)', { xs })).toBe(199_999);
    expect(ev('min(3, 1, 2)')).toBe(1);
  });

  it('renderTemplate - a value nested deeper than the stack is an ExprEvalError', () => {
    expect(() => renderTemplate(parseTemplate('echo ${v}'), scope({ v: deep }))).toThrow(ExprEvalError);
    expect(() => ev('v == v', { v: deep })).toThrow(ExprEvalError);
    expect(() => toText(deep)).toThrow(ExprEvalError);
  });

  it('constantErrors - a failing part that reads nothing is found before anything runs', () => {
    expect(constantErrors(parseExpr("params.p + pad('x', 100000000)"))).toEqual(['pad() to 100000000 characters; the limit is 1048576']);
    expect(constantErrors(parseExpr("pad(params.n, 5) + pad('x', 4)"))).toEqual([]);
    expect(constantErrors(parseExpr("exists('x') ? 1 : 2"))).toEqual([]);
  });
});
