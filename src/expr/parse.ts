import type { BinaryOp, Expr } from '../model/expr.ts';
import { ExprSyntaxError, tokenize, type Token } from './tokenize.ts';

const PRECEDENCE: Array<BinaryOp[]> = [['||'], ['&&'], ['==', '!='], ['<', '<=', '>', '>=', 'in'], ['+', '-'], ['*', '/', '%']];

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

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
    const test = this.binary(0);
    if (!this.isOp('?')) return test;
    this.next();
    const then = this.conditional();
    this.expect(':');
    return { t: 'cond', test, then, else: this.conditional() };
  }

  private binary(level: number): Expr {
    const ops = PRECEDENCE[level];
    if (!ops) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const op = ops.find((o) => this.isOp(o));
      if (!op) return left;
      this.next();
      left = { t: 'binary', op, left, right: this.binary(level + 1) };
    }
  }

  private unary(): Expr {
    if (this.isOp('!') || this.isOp('-')) {
      const op = (this.next() as { v: string }).v as '!' | '-';
      return { t: 'unary', op, arg: this.unary() };
    }
    return this.postfix(this.primary());
  }

  private postfix(start: Expr): Expr {
    let expr = start;
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        const t = this.next();
        if (t.k !== 'id' && t.k !== 'num') throw new ExprSyntaxError('expected a name after "."', t.at);
        expr = { t: 'get', obj: expr, key: String(t.v) };
      } else if (this.isOp('[')) {
        this.next();
        const index = this.conditional();
        this.expect(']');
        expr = { t: 'index', obj: expr, index };
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
      if (this.isOp('(')) return { t: 'call', fn: t.v, args: this.args(')') };
      return { t: 'ref', name: t.v };
    }
    if (t.k === 'op' && t.v === '(') {
      const inner = this.conditional();
      this.expect(')');
      return inner;
    }
    if (t.k === 'op' && t.v === '[') return { t: 'list', items: this.argsAfterOpen(']') };
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
  return new Parser(tokenize(text)).parseAll();
}
