import type { ParamSpec, PipelineSpec } from '../types/pipeline.ts';
import type { Diagnostic } from '../types/source.ts';
import { didYouMean } from '../diagnostics/format.ts';
import { collectRefs, parseTemplate } from '../expr/template.ts';
import { renderText } from '../expr/evaluate.ts';

/** What a default may ask of the project: `exists(path)`, relative to the project root. */
export interface ParamEffects {
  exists(rel: string): boolean;
}

/**
 * A string default with `${...}` is worked out when the run starts, from the project alone
 * (`exists()`; no names): `analyze` takes `.massgen/massgen_logs` where a project has one.
 */
function defaultValue(name: string, p: ParamSpec, effects: ParamEffects | undefined): { value?: unknown; error?: string } {
  if (typeof p.default !== 'string' || !p.default.includes('${')) return { value: p.default };
  try {
    const template = parseTemplate(p.default);
    const refs = { roots: new Set<string>(), artifactStages: new Set<string>() };
    for (const part of template.parts) if (typeof part !== 'string') collectRefs(part, refs);
    if (refs.roots.size > 0)
      return { error: `default of param '${name}' may use functions such as exists(), not names (${[...refs.roots].join(', ')})` };
    return { value: renderText(template, { vars: {}, effects: { exists: (rel) => effects?.exists(rel) ?? false } }) };
  } catch (error) {
    return { error: `default of param '${name}': ${(error as Error).message}` };
  }
}

function coerce(name: string, p: ParamSpec, raw: string): { value?: unknown; error?: string } {
  switch (p.type) {
    case 'string':
      return { value: raw };
    case 'number':
    case 'integer': {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n) || (p.type === 'integer' && !Number.isInteger(n)))
        return { error: `--param ${name}=${raw}: expected ${p.type === 'integer' ? 'a whole number' : 'a number'}` };
      return { value: n };
    }
    case 'boolean':
      if (['true', '1', 'yes'].includes(raw)) return { value: true };
      if (['false', '0', 'no'].includes(raw)) return { value: false };
      return { error: `--param ${name}=${raw}: expected true or false` };
    case 'list':
      if (raw.trim().startsWith('[')) {
        try {
          const parsed: unknown = JSON.parse(raw);
          if (Array.isArray(parsed)) return { value: parsed };
        } catch {
          return { error: `--param ${name}=${raw}: not a valid JSON list` };
        }
      }
      return {
        value: raw
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== ''),
      };
  }
}

/** Params from defaults and `--param key=value` overrides, coerced to their declared types. */
export function resolveParams(
  spec: PipelineSpec,
  overrides: Readonly<Record<string, string>>,
  effects?: ParamEffects,
): { params: Record<string, unknown>; diagnostics: Diagnostic[] } {
  const params: Record<string, unknown> = {};
  const diagnostics: Diagnostic[] = [];
  for (const [name, p] of Object.entries(spec.params)) {
    if (p.default === undefined || Object.hasOwn(overrides, name)) continue;
    const { value, error } = defaultValue(name, p, effects);
    if (error) diagnostics.push({ severity: 'error', code: 'invalid-param-default', message: error });
    else params[name] = value;
  }
  for (const [name, raw] of Object.entries(overrides).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const p = spec.params[name];
    if (!p) {
      const hint = didYouMean(name, Object.keys(spec.params));
      diagnostics.push({
        severity: 'error',
        code: 'unknown-param',
        message: `--param ${name}: pipeline '${spec.name}' has no param '${name}'${hint ? `; did you mean '${hint}'?` : ''}`,
      });
      continue;
    }
    const { value, error } = coerce(name, p, raw);
    if (error) diagnostics.push({ severity: 'error', code: 'invalid-param', message: error });
    else if (p.enum && !p.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
      diagnostics.push({
        severity: 'error',
        code: 'invalid-param',
        message: `--param ${name}=${raw}: expected one of ${p.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      });
    } else params[name] = value;
  }
  const missing = Object.entries(spec.params).filter(([name, p]) => !(name in params) && p.default === undefined);
  if (missing.length > 0) {
    const list = missing.map(([name, p]) => `${name} (${p.type}${p.description ? `: ${p.description}` : ''})`);
    const flags = missing.map(([name]) => `--param ${name}=VALUE`).join(' ');
    diagnostics.push({
      severity: 'error',
      code: 'missing-param',
      message: `pipeline '${spec.name}' needs ${missing.length === 1 ? 'a param' : `${missing.length} params`} with no default: ${list.join('; ')}. Pass ${flags}`,
    });
  }
  return { params, diagnostics };
}
