import type { Expr, Template } from '../types/expr.ts';
import { parseExpr } from './parse.ts';
import { ExprSyntaxError } from './tokenize.ts';

/** Finds the `}` closing a `${` that starts at `open`, skipping quoted strings. */
function findClose(text: string, open: number): number {
  let depth = 0;
  for (let i = open + 2; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (c === '{') depth += 1;
    else if (c === '}') {
      if (depth === 0) return i;
      depth -= 1;
    }
  }
  return -1;
}

/** Parses `text` with `${expr}` parts; `$${` is a literal `${`. Offsets in errors are into `text`. */
export function parseTemplate(text: string): Template {
  const parts: Array<string | Expr> = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      literal += '${';
      i += 3;
    } else if (text.startsWith('${', i)) {
      const close = findClose(text, i);
      if (close < 0) throw new ExprSyntaxError("'${' has no closing '}'", i);
      const inner = text.slice(i + 2, close);
      if (inner.trim() === '') throw new ExprSyntaxError('empty ${}', i);
      if (literal) parts.push(literal);
      literal = '';
      try {
        parts.push(parseExpr(inner));
      } catch (error) {
        if (error instanceof ExprSyntaxError) throw new ExprSyntaxError(error.message, i + 2 + error.offset);
        throw error;
      }
      i = close + 1;
    } else {
      literal += text[i];
      i += 1;
    }
  }
  if (literal || parts.length === 0) parts.push(literal);
  return { source: text, parts };
}

/** An expression given bare (`when: a == b`) or wrapped (`when: ${a == b}`). */
export function parseCondition(text: string): Expr {
  const trimmed = text.trim();
  if (trimmed.startsWith('${') && findClose(trimmed, 0) === trimmed.length - 1) return parseExpr(trimmed.slice(2, -1));
  return parseExpr(trimmed);
}

export function isConstant(template: Template): boolean {
  return template.parts.every((p) => typeof p === 'string');
}

/** Every reference root (`params`, `item`, `artifacts`, ...) and artifact stage an expression uses. */
export function collectRefs(expr: Expr, into: { roots: Set<string>; artifactStages: Set<string> }): void {
  switch (expr.t) {
    case 'ref':
      into.roots.add(expr.name);
      return;
    case 'get':
      if (expr.obj.t === 'ref' && expr.obj.name === 'artifacts') into.artifactStages.add(expr.key);
      collectRefs(expr.obj, into);
      return;
    case 'index':
      collectRefs(expr.obj, into);
      collectRefs(expr.index, into);
      return;
    case 'unary':
      collectRefs(expr.arg, into);
      return;
    case 'binary':
      collectRefs(expr.left, into);
      collectRefs(expr.right, into);
      return;
    case 'cond':
      collectRefs(expr.test, into);
      collectRefs(expr.then, into);
      collectRefs(expr.else, into);
      return;
    case 'call':
    case 'list':
      for (const a of expr.t === 'call' ? expr.args : expr.items) collectRefs(a, into);
      return;
    case 'lit':
      return;
  }
}
