import type { Template } from '../types/expr.ts';
import type { StageInstance } from '../types/plan.ts';
import { renderTemplate, toText, type LazyRecord, type Scope } from '../expr/evaluate.ts';

export interface RenderVars {
  params: Record<string, unknown>;
  /** The pipeline's `vars:`, as computed for this run. */
  vars: Record<string, unknown>;
  pipeline: string;
  artifacts: LazyRecord;
  /** Output name -> path (staging paths when running, target paths when fingerprinting). */
  outputs: Record<string, string>;
  inputs: readonly string[];
  exists: (p: string) => boolean;
}

export function scopeFor(inst: StageInstance, v: RenderVars): Scope {
  return {
    vars: {
      params: v.params,
      vars: v.vars,
      pipeline: { name: v.pipeline },
      stage: { id: inst.id, name: inst.stageId },
      artifacts: v.artifacts,
      outputs: v.outputs,
      inputs: [...v.inputs],
      ...inst.vars,
    },
    effects: { exists: v.exists },
  };
}

function isTemplate(value: unknown): value is Template {
  return typeof value === 'object' && value !== null && 'parts' in value && 'source' in value;
}

/** A task's `with:` values with every template rendered; a key whose value is null is left out, so the task's default applies. */
export function renderWith(value: unknown, scope: Scope): unknown {
  if (isTemplate(value)) return renderTemplate(value, scope);
  if (Array.isArray(value)) return value.map((v) => renderWith(v, scope));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => [k, renderWith(v, scope)] as const);
    return Object.fromEntries(entries.filter(([, v]) => v !== null && v !== undefined));
  }
  return value;
}

/** A `run:` stage as literal shell pieces around values that zx will quote. */
export function renderCommand(inst: StageInstance, scope: Scope): { pieces: string[]; values: unknown[] } {
  if (inst.spec.kind !== 'run') throw new Error(`internal: ${inst.id} is not a run stage`);
  const run = inst.spec.run;
  if ('argv' in run) {
    const argv = run.argv.map((t) => toText(renderTemplate(t, scope)));
    return { pieces: ['', ''], values: [argv] };
  }
  const pieces: string[] = [''];
  const values: unknown[] = [];
  for (const part of run.shell.parts) {
    if (typeof part === 'string') pieces[pieces.length - 1] += part;
    else {
      const value = renderTemplate({ source: '', parts: [part] }, scope);
      values.push(Array.isArray(value) ? value.map(toText) : toText(value));
      pieces.push('');
    }
  }
  return { pieces, values };
}

export function renderEnv(inst: StageInstance, scope: Scope): Record<string, string> {
  return Object.fromEntries(Object.entries(inst.spec.env).map(([k, t]) => [k, toText(renderTemplate(t, scope))]));
}
