import type { BinaryOp, Expr } from '../types/expr.ts';
import { isFunctionName, FUNCTION_NAMES } from './evaluate.ts';
import { ExprSyntaxError, tokenize, type Token } from './tokenize.ts';

/** Longest expression text accepted (the text inside one `${...}`, or a condition). */
export const MAX_EXPR_LENGTH = 10_000;
/**
 * Deepest expression tree accepted: parentheses, operators and `.field` chains each add a
 * level. Parsing, checking and evaluating recurse over the tree, so this keeps them far from
 * the stack's limit.
 */
export const MAX_EXPR_DEPTH = 100;

const PRECEDENCE: Array<BinaryOp[]> = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>=', 'in'], ['+', '-'], ['*', '/', '%']];

class Parser {
  private pos = 0;
  /** How deep the parser's own recursion is, counted at each nesting construct. */
  private nesting = 0;
  /** Height of each node built that is not a leaf (leaves are 1). */
  private readonly heights = new Map<Expr, number>();
  constructor(private readonly tokens: Token[]) {}

  private tooDeep(at: number): ExprSyntaxError {
    return new ExprSyntaxError(
      `expression nested too deeply (more than ${MAX_EXPR_DEPTH} levels of parentheses, operators or fields); split it into simpler expressions`,
      at,
    );
  }

  /** Records a node's height from its children's; a tree taller than the limit is an error at `at`. */
  private node<E extends Expr>(expr: E, at: number, children: readonly Expr[]): E {
    let height = 0;
    for (const child of children) height = Math.max(height, this.heights.get(child) ?? 1);
    if (height + 1 > MAX_EXPR_DEPTH) throw this.tooDeep(at);
    this.heights.set(expr, height + 1);
    return expr;
  }

  private enter(at: number): void {
    this.nesting += 1;
    if (this.nesting > MAX_EXPR_DEPTH) throw this.tooDeep(at);
  }

  private peek(): Token {
    return this.tokens[this.pos] as Token;
  }

  private next(): Token {
    const token = this.peek();
    this.pos += 1;
    return token;
  }

  private isOp(value: string): boolean {
    const t = this.peek();
    return (t.k === 'op' || (t.k === 'id' && value === 'in')) && t.v === value;
  }

  private expect(value: string): void {
    const t = this.next();
    if (!((t.k === 'op' || t.k === 'id') && t.v === value)) throw new ExprSyntaxError(`expected '${value}'`, t.at);
  }

  parseAll(): Expr {
    const expr = this.conditional();
    const t = this.peek();
    if (t.k !== 'end') throw new ExprSyntaxError(`unexpected '${'v' in t ? String(t.v) : ''}'`, t.at);
    return expr;
  }

  private conditional(): Expr {
    this.enter(this.peek().at);
    const test = this.binary(0);
    if (!this.isOp('?')) {
      this.nesting -= 1;
      return test;
    }
    const at = this.next().at;
    const then = this.conditional();
    this.expect(':');
    const otherwise = this.conditional();
    this.nesting -= 1;
    return this.node({ t: 'cond', test, then, else: otherwise }, at, [test, then, otherwise]);
  }

  private binary(level: number): Expr {
    const ops = PRECEDENCE[level];
    if (!ops) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const op = ops.find((o) => this.isOp(o));
      if (!op) return left;
      const at = this.next().at;
      const right = this.binary(level + 1);
      left = this.node({ t: 'binary', op, left, right }, at, [left, right]);
    }
  }

  private unary(): Expr {
    if (this.isOp('!') || this.isOp('-')) {
      const token = this.next() as { v: string; at: number };
      this.enter(token.at);
      const arg = this.unary();
      this.nesting -= 1;
      return this.node({ t: 'unary', op: token.v as '!' | '-', arg }, token.at, [arg]);
    }
    return this.postfix(this.primary());
  }

  private postfix(start: Expr): Expr {
    let expr = start;
    for (;;) {
      if (this.isOp('.')) {
        const at = this.next().at;
        const t = this.next();
        if (t.k !== 'id' && t.k !== 'num') throw new ExprSyntaxError('expected a name after "."', t.at);
        expr = this.node({ t: 'get', obj: expr, key: String(t.v) }, at, [expr]);
      } else if (this.isOp('[')) {
        const at = this.next().at;
        const index = this.conditional();
        this.expect(']');
        expr = this.node({ t: 'index', obj: expr, index }, at, [expr, index]);
      } else {
        return expr;
      }
    }
  }

  private primary(): Expr {
    const t = this.next();
    if (t.k === 'num' || t.k === 'str') return { t: 'lit', v: t.v };
    if (t.k === 'id') {
      if (t.v === 'true' || t.v === 'false') return { t: 'lit', v: t.v === 'true' };
      if (t.v === 'null') return { t: 'lit', v: null };
      if (this.isOp('(')) {
        // Only the documented functions exist; any other name (toString, constructor...) is an error here, before anything runs.
        if (!isFunctionName(t.v))
          throw new ExprSyntaxError(`unknown function '${t.v}'; the functions are ${FUNCTION_NAMES.join(', ')}`, t.at);
        const args = this.args(')');
        return this.node({ t: 'call', fn: t.v, args }, t.at, args);
      }
      return { t: 'ref', name: t.v };
    }
    if (t.k === 'op' && t.v === '(') {
      const inner = this.conditional();
      this.expect(')');
      return inner;
    }
    if (t.k === 'op' && t.v === '[') {
      const items = this.argsAfterOpen(']');
      return this.node({ t: 'list', items }, t.at, items);
    }
    throw new ExprSyntaxError(t.k === 'end' ? 'unexpected end of expression' : `unexpected '${t.v}'`, t.at);
  }

  private args(close: string): Expr[] {
    this.next();
    return this.argsAfterOpen(close);
  }

  private argsAfterOpen(close: string): Expr[] {
    const items: Expr[] = [];
    if (this.isOp(close)) {
      this.next();
      return items;
    }
    for (;;) {
      items.push(this.conditional());
      if (this.isOp(',')) {
        this.next();
        continue;
      }
      this.expect(close);
      return items;
    }
  }
}

/** Parses one expression; throws ExprSyntaxError with the offset of the problem. */
export function parseExpr(text: string): Expr {
  if (text.length > MAX_EXPR_LENGTH) {
    throw new ExprSyntaxError(`expression is ${text.length} characters long; the limit is ${MAX_EXPR_LENGTH}`, 0);
  }
  return new Parser(tokenize(text)).parseAll();
}
