/** Parsed expressions: data, evaluated by src/expr/evaluate.ts, never by eval. */
export type Expr =
  | { t: 'lit'; v: string | number | boolean | null }
  | { t: 'list'; items: Expr[] }
  | { t: 'ref'; name: string }
  | { t: 'get'; obj: Expr; key: string }
  | { t: 'index'; obj: Expr; index: Expr }
  | { t: 'unary'; op: '!' | '-'; arg: Expr }
  | { t: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { t: 'cond'; test: Expr; then: Expr; else: Expr }
  | { t: 'call'; fn: string; args: Expr[] };

export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%' | 'in';

/** A string with `${expr}` parts. A template that is one whole `${expr}` keeps the value's type. */
export interface Template {
  source: string;
  parts: Array<string | Expr>;
}
