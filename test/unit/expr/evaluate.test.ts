import { describe, expect, it } from 'vitest';
import { parseExpr } from '../../../src/engine/expr/parse.ts';
import { parseTemplate, parseCondition } from '../../../src/engine/expr/template.ts';
import { evaluate, ExprEvalError, lazyRecord, renderTemplate } from '../../../src/engine/expr/evaluate.ts';
import { ExprSyntaxError } from '../../../src/engine/expr/tokenize.ts';

const scope = (vars: Record<string, unknown>) => ({ vars, effects: { exists: (p: string) => p === 'here' } });
const ev = (text: string, vars: Record<string, unknown> = {}) => evaluate(parseExpr(text), scope(vars));

describe('expression evaluator', () => {
  it('evaluate - arithmetic and precedence', () => {
    expect(ev('1 + 2 * 3')).toBe(7);
    expect(ev('(1 + 2) * 3')).toBe(9);
    expect(ev('10 % 4 - -1')).toBe(3);
  });

  it('evaluate - comparisons, logic and the conditional', () => {
    expect(ev("a == 'x' && b > 2", { a: 'x', b: 3 })).toBe(true);
    expect(ev('a || b', { a: '', b: 'fallback' })).toBe('fallback');
    expect(ev('!x ? "no" : "yes"', { x: 1 })).toBe('yes');
    expect(ev("'b' in ['a', 'b']")).toBe(true);
  });

  it('evaluate - member access, indexing and lazy records', () => {
    let reads = 0;
    const artifacts = lazyRecord((stage) => {
      reads += 1;
      return stage === 'consensus' ? { verdict: { status: 'converged', scores: [7, 9] } } : undefined;
    });
    expect(ev("artifacts.consensus.verdict.status == 'converged'", { artifacts })).toBe(true);
    expect(ev('artifacts.consensus.verdict.scores[1]', { artifacts })).toBe(9);
    expect(ev('artifacts.missing.x', { artifacts })).toBeUndefined();
    expect(reads).toBe(3);
  });

  it('evaluate - prototype members are not reachable', () => {
    expect(ev('x.constructor', { x: {} })).toBeUndefined();
    expect(ev('x.__proto__', { x: {} })).toBeUndefined();
    expect(ev("x['toString']", { x: {} })).toBeUndefined();
  });

  it('evaluate - unknown names and functions are errors, not undefined', () => {
    expect(() => ev('nope')).toThrow(ExprEvalError);
    expect(() => ev('eval("1")')).toThrow(/unknown function 'eval'/);
  });

  it('evaluate - functions', () => {
    expect(ev("len(xs) + len('abc')", { xs: [1, 2] })).toBe(5);
    expect(ev("basename('a/b/c.txt')")).toBe('c.txt');
    expect(ev('pad(7, 3)')).toBe('007');
    expect(ev("join(split('a,b', ','), '-')")).toBe('a-b');
    expect(ev("exists('here') && !exists('there')")).toBe(true);
    expect(ev("default(x, 'd')", { x: null })).toBe('d');
  });

  it('parseExpr - a syntax error carries its offset', () => {
    try {
      parseExpr('1 + * 2');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ExprSyntaxError);
      expect((error as ExprSyntaxError).offset).toBe(4);
    }
  });

  it('parseTemplate - a lone ${expr} keeps its type, mixed text joins', () => {
    expect(renderTemplate(parseTemplate('${xs}'), scope({ xs: [1, 2] }))).toEqual([1, 2]);
    expect(renderTemplate(parseTemplate('out/${item.stem}.json'), scope({ item: { stem: 'a' } }))).toBe('out/a.json');
    expect(renderTemplate(parseTemplate('cost $${x}'), scope({}))).toBe('cost ${x}');
    expect(renderTemplate(parseTemplate("${'}'}"), scope({}))).toBe('}');
  });

  it('parseTemplate - an unclosed ${ is reported at its offset', () => {
    expect(() => parseTemplate('abc ${x')).toThrow(expect.objectContaining({ offset: 4 }));
  });

  it('parseCondition - bare and wrapped forms are the same', () => {
    expect(parseCondition('a == 1')).toEqual(parseCondition('${a == 1}'));
  });
});
