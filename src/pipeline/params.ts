import type { ParamSpec, PipelineSpec } from '../model/pipeline.ts';
import type { Diagnostic } from '../model/source.ts';
import { didYouMean } from '../diagnostics/format.ts';

function coerce(name: string, p: ParamSpec, raw: string): { value?: unknown; error?: string } {
  switch (p.type) {
    case 'string':
      return { value: raw };
    case 'number':
    case 'integer': {
      const n = Number(raw);
      if (raw.trim() === '' || Number.isNaN(n) || (p.type === 'integer' && !Number.isInteger(n))) return { error: `--param ${name}=${raw}: expected ${p.type === 'integer' ? 'a whole number' : 'a number'}` };
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
      return { value: raw.split(',').map((s) => s.trim()).filter((s) => s !== '') };
  }
}

/** Params from defaults and `--param key=value` overrides, coerced to their declared types. */
export function resolveParams(spec: PipelineSpec, overrides: Readonly<Record<string, string>>): { params: Record<string, unknown>; diagnostics: Diagnostic[] } {
  const params: Record<string, unknown> = {};
  const diagnostics: Diagnostic[] = [];
  for (const [name, p] of Object.entries(spec.params)) if (p.default !== undefined) params[name] = p.default;
  for (const [name, raw] of Object.entries(overrides).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const p = spec.params[name];
    if (!p) {
      const hint = didYouMean(name, Object.keys(spec.params));
      diagnostics.push({ severity: 'error', message: `--param ${name}: pipeline '${spec.name}' has no param '${name}'${hint ? `; did you mean '${hint}'?` : ''}` });
      continue;
    }
    const { value, error } = coerce(name, p, raw);
    if (error) diagnostics.push({ severity: 'error', message: error });
    else if (p.enum && !p.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
      diagnostics.push({ severity: 'error', message: `--param ${name}=${raw}: expected one of ${p.enum.map((e) => JSON.stringify(e)).join(', ')}` });
    } else params[name] = value;
  }
  for (const [name, p] of Object.entries(spec.params)) {
    if (!(name in params)) diagnostics.push({ severity: 'error', message: `param '${name}' (${p.type}) has no default; pass --param ${name}=VALUE` });
  }
  return { params, diagnostics };
}
