import type { Expr } from '../types/expr.ts';
import { evaluate, ExprEvalError } from './evaluate.ts';

function children(expr: Expr): Expr[] {
  switch (expr.t) {
    case 'lit':
    case 'ref':
      return [];
    case 'list':
      return expr.items;
    case 'call':
      return expr.args;
    case 'get':
      return [expr.obj];
    case 'index':
      return [expr.obj, expr.index];
    case 'unary':
      return [expr.arg];
    case 'binary':
      return [expr.left, expr.right];
    case 'cond':
      return [expr.test, expr.then, expr.else];
  }
}

/** Whether `expr` reads nothing (no names, no exists()); the largest such parts that are not bare literals go to `out`. */
function collectConstantParts(expr: Expr, out: Expr[]): boolean {
  const kids = children(expr);
  const constantKids = kids.map((k) => collectConstantParts(k, out));
  const constant = expr.t !== 'ref' && !(expr.t === 'call' && expr.fn === 'exists') && constantKids.every(Boolean);
  if (!constant) kids.forEach((k, i) => constantKids[i] && k.t !== 'lit' && out.push(k));
  return constant;
}

/**
 * The errors of the parts of an expression whose value is known before anything runs
 * (`pad('x', 1e9)`): they are reported with the pipeline's other errors instead of failing a stage.
 */
export function constantErrors(expr: Expr): string[] {
  const parts: Expr[] = [];
  if (collectConstantParts(expr, parts) && expr.t !== 'lit') parts.push(expr);
  const errors: string[] = [];
  for (const part of parts) {
    try {
      evaluate(part, { vars: {} });
    } catch (error) {
      if (!(error instanceof ExprEvalError)) throw error;
      errors.push(error.message);
    }
  }
  return errors;
}
