import type { Template } from '../types/expr.ts';
import type { PipelineSpec, StageOrLoop, StageSpec, VarSpec } from '../types/pipeline.ts';
import type { SourceSpan } from '../types/source.ts';
import { setLazySpan } from './lazy-span.ts';

/**
 * A smaller JSON form of a checked pipeline for the parse cache: constant templates become
 * plain strings, default fields and repeated file names are left out. Large pipelines are
 * read back about three times faster.
 */
type Compact = Record<string, unknown>;
type StagePath = Array<string | number>;
type Locate = (path: StagePath) => SourceSpan | undefined;

function packTemplate(t: Template): Template | string {
  return t.parts.length === 1 && typeof t.parts[0] === 'string' ? t.source : t;
}

function unpackTemplate(t: Template | string): Template {
  return typeof t === 'string' ? { source: t, parts: [t] } : t;
}

export function packStage(stage: StageSpec): Compact {
  const out: Compact = { ...stage };
  out.inputs = stage.inputs.map(packTemplate);
  out.outputs = Object.fromEntries(Object.entries(stage.outputs).map(([k, o]) => [k, { ...o, path: packTemplate(o.path) }]));
  if (stage.kind === 'run')
    out.run = 'shell' in stage.run ? { shell: packTemplate(stage.run.shell) } : { argv: stage.run.argv.map(packTemplate) };
  if (stage.needs.length === 0) delete out.needs;
  if (stage.as === 'item') delete out.as;
  if (stage.retry.attempts === 0 && stage.retry.backoffMs === 1000) delete out.retry;
  if (Object.keys(stage.env).length === 0) delete out.env;
  return out;
}

export function unpackStage(c: Compact, path: StagePath, locate: Locate): StageSpec {
  const s = c as unknown as StageSpec;
  const stage = {
    ...s,
    inputs: (c.inputs as Array<Template | string>).map(unpackTemplate),
    outputs: Object.fromEntries(
      Object.entries(c.outputs as Record<string, { path: Template | string; schema?: string }>).map(([k, o]) => [
        k,
        { ...o, path: unpackTemplate(o.path) },
      ]),
    ),
    needs: (c.needs as string[] | undefined) ?? [],
    as: (c.as as string | undefined) ?? 'item',
    retry: (c.retry as StageSpec['retry'] | undefined) ?? { attempts: 0, backoffMs: 1000 },
    env: (c.env as StageSpec['env'] | undefined) ?? {},
  } as StageSpec;
  setLazySpan(stage, () => locate(path));
  if (stage.kind === 'run') {
    const run = c.run as { shell?: Template | string; argv?: Array<Template | string> };
    stage.run = run.shell !== undefined ? { shell: unpackTemplate(run.shell) } : { argv: (run.argv ?? []).map(unpackTemplate) };
  }
  return stage;
}

export function packSpec(spec: PipelineSpec): Compact {
  const stages = spec.stages.map((s) => (s.kind === 'loop' ? { ...s, stages: s.stages.map(packStage) } : packStage(s)));
  const vars = Object.fromEntries(Object.entries(spec.vars).map(([name, v]) => [name, v.value]));
  return { ...spec, vars, stages };
}

/** `locate` answers where a stage is in the file, for the few stages a diagnostic names. */
export function unpackSpec(c: Compact, locate: Locate): PipelineSpec {
  const spec = c as unknown as PipelineSpec;
  const stages = (c.stages as Compact[]).map((s) => {
    const at: StagePath = ['stages', s.id as string];
    if (s.kind !== 'loop') return unpackStage(s, at, locate);
    const inner = (s.stages as Compact[]).map((t) => unpackStage(t, [...at, 'loop', 'stages', t.id as string], locate));
    return setLazySpan({ ...s, stages: inner } as unknown as StageOrLoop, () => locate(at));
  });
  const vars = Object.fromEntries(
    Object.entries(c.vars as Record<string, unknown>).map(([name, value]) => [
      name,
      setLazySpan<VarSpec>({ value }, () => locate(['vars', name])),
    ]),
  );
  return { ...spec, vars, stages };
}
