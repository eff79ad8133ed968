// A pipeline's named values (`vars:`). Each is a template, or data whose strings may be templates,
// over params, pipeline and other vars; check.ts checks the names they read and that no var reads
// itself through others when the file loads. They are computed here once per run, after the
// params, each after the vars it reads.
import type { Expr, Template } from '../types/expr.ts';
import type { PipelineSpec, VarSpec } from '../types/pipeline.ts';
import type { Diagnostic } from '../types/source.ts';
import { ExprEvalError, renderTemplate, type Scope } from '../expr/evaluate.ts';

/** The vars an expression reads by name (`vars.NAME`, `vars['NAME']`), and whether it reads `vars` whole. */
export function varRefs(expr: Expr): { names: Set<string>; whole: boolean } {
  const found = { names: new Set<string>(), whole: false };
  const visit = (e: Expr): void => {
    const ofVars = (e.t === 'get' || e.t === 'index') && e.obj.t === 'ref' && e.obj.name === 'vars';
    if (ofVars && e.t === 'get') return void found.names.add(e.key);
    if (ofVars && e.t === 'index' && e.index.t === 'lit' && typeof e.index.v === 'string') return void found.names.add(e.index.v);
    if (e.t === 'ref' && e.name === 'vars') found.whole = true;
    for (const child of Object.values(e)) {
      if (Array.isArray(child)) for (const c of child) if (typeof c === 'object' && c && 't' in c) visit(c as Expr);
      if (typeof child === 'object' && child && 't' in child) visit(child as Expr);
    }
  };
  visit(expr);
  return found;
}

function isTemplate(value: unknown): value is Template {
  return typeof value === 'object' && value !== null && 'parts' in value && 'source' in value;
}

function render(value: unknown, scope: Scope): unknown {
  if (isTemplate(value)) return renderTemplate(value, scope);
  if (Array.isArray(value)) return value.map((v) => render(v, scope));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v, scope)]));
  return value;
}

function templatesIn(value: unknown, out: Template[] = []): Template[] {
  if (isTemplate(value)) out.push(value);
  else if (Array.isArray(value)) for (const v of value) templatesIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) templatesIn(v, out);
  return out;
}

/** The vars' names, each after the vars it reads (the load has refused a cycle). */
function computeOrder(spec: PipelineSpec): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (name: string): void => {
    if (seen.has(name) || !Object.hasOwn(spec.vars, name)) return;
    seen.add(name);
    for (const t of templatesIn(spec.vars[name]?.value))
      for (const part of t.parts) if (typeof part !== 'string') for (const read of varRefs(part).names) visit(read);
    order.push(name);
  };
  for (const name of Object.keys(spec.vars)) visit(name);
  return order;
}

/** The vars' values for these params; a var whose expression fails is reported at its name and is null. */
export function computeVars(
  spec: PipelineSpec,
  params: Record<string, unknown>,
  exists: (path: string) => boolean,
): { vars: Record<string, unknown>; diagnostics: Diagnostic[] } {
  const values: Record<string, unknown> = {};
  const diagnostics: Diagnostic[] = [];
  const scope: Scope = { vars: { params, pipeline: { name: spec.name }, vars: values }, effects: { exists } };
  for (const name of computeOrder(spec)) {
    const declared = spec.vars[name] as VarSpec;
    let value: unknown = null;
    try {
      value = render(declared.value, scope);
    } catch (error) {
      if (!(error instanceof ExprEvalError)) throw error;
      diagnostics.push({
        severity: 'error',
        code: 'expression-failed',
        message: `var '${name}': ${error.message}`,
        ...(declared.span ? { span: declared.span } : {}),
      });
    }
    Object.defineProperty(values, name, { value, enumerable: true, writable: true, configurable: true });
  }
  // In the order the file declares them (for a plan record, a message listing them).
  return { vars: Object.fromEntries(Object.keys(spec.vars).map((name) => [name, values[name]])), diagnostics };
}
