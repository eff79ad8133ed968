import type { Expr, Template } from '../types/expr.ts';
import type { ForeachSpec, LoopSpec, OutputSpec, ParamSpec, PipelineSpec, StageOrLoop, StageSpec, VarSpec } from '../types/pipeline.ts';
import { parseCondition, parseTemplate } from '../expr/template.ts';
import { ExprSyntaxError } from '../expr/tokenize.ts';
import type { SourceSpan } from '../types/source.ts';
import type { Locator } from './locate.ts';
import { setLazySpan } from './lazy-span.ts';
import { parseDurationMs, STAGE_ID, type RawPipeline, type RawStage } from './pipeline-schema.ts';

type Path = Array<string | number>;

const EMPTY: Template = { source: '', parts: [''] };

function template(text: string, path: Path, locator: Locator): Template {
  try {
    return parseTemplate(text);
  } catch (error) {
    if (!(error instanceof ExprSyntaxError)) throw error;
    locator.error('bad-expression', path, `bad expression: ${error.message}`, { span: locator.spanInString(path, error.offset) });
    return EMPTY;
  }
}

function condition(text: string | boolean, path: Path, locator: Locator): Expr {
  if (typeof text === 'boolean') return { t: 'lit', v: text };
  try {
    return parseCondition(text);
  } catch (error) {
    if (!(error instanceof ExprSyntaxError)) throw error;
    const shift = text.trim().startsWith('${') ? 2 : 0;
    locator.error('bad-expression', path, `bad expression: ${error.message}`, { span: locator.spanInString(path, error.offset + shift) });
    return { t: 'lit', v: false };
  }
}

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** Templates inside `with` values, recursively; non-strings stay as they are. */
function withValues(value: unknown, path: Path, locator: Locator): unknown {
  if (typeof value === 'string') return value.includes('${') ? template(value, path, locator) : value;
  if (Array.isArray(value)) return value.map((v, i) => withValues(v, [...path, i], locator));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withValues(v, [...path, k], locator)]));
  }
  return value;
}

function foreachSpec(raw: RawStage['foreach'], path: Path, locator: Locator): ForeachSpec | undefined {
  if (raw === undefined) return undefined;
  if (Array.isArray(raw)) return { kind: 'list', items: raw };
  if (typeof raw === 'string') return { kind: 'list', items: template(raw, path, locator) };
  const patterns = list(raw.glob).map((g, i) => template(g, Array.isArray(raw.glob) ? [...path, 'glob', i] : [...path, 'glob'], locator));
  return { kind: 'glob', patterns, type: raw.type ?? 'file', ...(raw.allow_empty === true ? { allowEmpty: true as const } : {}) };
}

function outputs(raw: RawStage['outputs'], path: Path, locator: Locator): Record<string, OutputSpec> {
  const out: Record<string, OutputSpec> = {};
  for (const [name, decl] of Object.entries(raw ?? {})) {
    const at = [...path, 'outputs', name];
    out[name] =
      typeof decl === 'string'
        ? { path: template(decl, at, locator) }
        : { path: template(decl.path, [...at, 'path'], locator), ...(decl.schema ? { schema: decl.schema } : {}) };
  }
  return out;
}

function stageSpec(id: string, raw: RawStage, path: Path, locator: Locator): StageOrLoop | undefined {
  const kinds = (['task', 'run', 'loop'] as const).filter((k) => raw[k] !== undefined);
  if (!STAGE_ID.test(id)) {
    locator.error('invalid-stage-name', path, `stage name '${id}' must start with a letter or _ and use only letters, digits, _ and -`, {
      which: 'key',
    });
  }
  if (kinds.length !== 1) {
    const message =
      kinds.length === 0 ? `stage '${id}' needs one of task:, run: or loop:` : `stage '${id}' has ${kinds.join(' and ')}; give only one`;
    locator.error('stage-kind', path, message, { which: 'key' });
    return undefined;
  }
  const needs = list(raw.needs);
  if (raw.loop) return loopSpec(id, raw, path, locator);
  if (raw.with !== undefined && raw.task === undefined)
    locator.error('misplaced-key', [...path, 'with'], '`with:` passes params to a task; a run: stage has none', { which: 'key' });
  const base = {
    id,
    ...(raw.description ? { description: raw.description } : {}),
    inputs: list(raw.inputs).map((p, i) => template(p, Array.isArray(raw.inputs) ? [...path, 'inputs', i] : [...path, 'inputs'], locator)),
    outputs: outputs(raw.outputs, path, locator),
    needs,
    as: raw.as ?? 'item',
    retry: { attempts: raw.retries ?? 0, backoffMs: raw.retry_backoff !== undefined ? parseDurationMs(raw.retry_backoff) : 1000 },
    env: Object.fromEntries(Object.entries(raw.env ?? {}).map(([k, v]) => [k, template(String(v), [...path, 'env', k], locator)])),
    ...(raw.foreach !== undefined ? { foreach: foreachSpec(raw.foreach, [...path, 'foreach'], locator) as ForeachSpec } : {}),
    ...(raw.when !== undefined ? { when: condition(raw.when, [...path, 'when'], locator) } : {}),
    ...(raw.stale_if !== undefined ? { staleIf: condition(raw.stale_if, [...path, 'stale_if'], locator) } : {}),
    ...(raw.final_if !== undefined ? { finalIf: condition(raw.final_if, [...path, 'final_if'], locator) } : {}),
    ...(raw.pool ? { pool: raw.pool } : {}),
    ...(raw.timeout !== undefined ? { timeoutMs: parseDurationMs(raw.timeout) } : {}),
    ...(raw.local === true ? { local: true as const } : {}),
  };
  const locate = (): SourceSpan => locator.span(path, 'key');
  if (raw.task !== undefined) {
    return setLazySpan<StageSpec>(
      { ...base, kind: 'task', task: raw.task, with: withValues(raw.with ?? {}, [...path, 'with'], locator) as Record<string, unknown> },
      locate,
    );
  }
  const run = raw.run as string | string[];
  const runSpec = Array.isArray(run)
    ? { argv: run.map((a, i) => template(a, [...path, 'run', i], locator)) }
    : { shell: template(run, [...path, 'run'], locator) };
  return setLazySpan<StageSpec>({ ...base, kind: 'run', run: runSpec }, locate);
}

function loopSpec(id: string, raw: RawStage, path: Path, locator: Locator): LoopSpec {
  const loop = raw.loop as NonNullable<RawStage['loop']>;
  for (const key of ['inputs', 'outputs', 'foreach', 'with', 'when', 'stale_if', 'final_if'] as const) {
    if (raw[key] !== undefined)
      locator.error('misplaced-key', [...path, key], `a loop stage takes no '${key}'; put it on the stages inside the loop`, {
        which: 'key',
      });
  }
  const stages: StageSpec[] = [];
  for (const [innerId, inner] of Object.entries(loop.stages)) {
    const innerPath = [...path, 'loop', 'stages', innerId];
    if (inner.loop) {
      locator.error('nested-loop', innerPath, 'loops cannot be nested', { which: 'key' });
      continue;
    }
    const spec = stageSpec(innerId, inner, innerPath, locator);
    if (spec && spec.kind !== 'loop') stages.push(spec);
  }
  return setLazySpan<LoopSpec>(
    {
      kind: 'loop',
      id,
      ...(raw.description ? { description: raw.description } : {}),
      needs: list(raw.needs),
      max: typeof loop.max === 'number' ? loop.max : template(loop.max, [...path, 'loop', 'max'], locator),
      ...(loop.until !== undefined ? { until: condition(loop.until, [...path, 'loop', 'until'], locator) } : {}),
      stages,
    },
    () => locator.span(path, 'key'),
  );
}

function paramSpecs(raw: RawPipeline['params']): Record<string, ParamSpec> {
  const out: Record<string, ParamSpec> = {};
  for (const [name, p] of Object.entries(raw ?? {})) out[name] = { ...p } as ParamSpec;
  return out;
}

function varSpecs(raw: RawPipeline['vars'], locator: Locator): Record<string, VarSpec> {
  return Object.fromEntries(
    Object.entries(raw ?? {}).map(([name, value]) => {
      const at = ['vars', name];
      return [name, setLazySpan<VarSpec>({ value: withValues(value, at, locator) }, () => locator.span(at, 'key'))];
    }),
  );
}

export function toSpec(raw: RawPipeline, locator: Locator, hash: string): PipelineSpec {
  const stages: StageOrLoop[] = [];
  for (const [id, stage] of Object.entries(raw.stages)) {
    const spec = stageSpec(id, stage, ['stages', id], locator);
    if (spec) stages.push(spec);
  }
  return {
    name: raw.pipeline,
    ...(raw.description ? { description: raw.description } : {}),
    file: locator.file,
    hash,
    params: paramSpecs(raw.params),
    vars: varSpecs(raw.vars, locator),
    pools: raw.pools ?? {},
    stages,
  };
}
