import path from 'node:path';
import type { Expr, Template } from '../types/expr.ts';
import type { LoopSpec, ParamSpec, PipelineSpec, StageOrLoop, StageSpec } from '../types/pipeline.ts';
import { collectRefs, isConstant } from '../expr/template.ts';
import { constantErrors } from '../expr/constant.ts';
import { didYouMean } from '../diagnostics/format.ts';
import { buildGraph, findCycle, type GraphNode } from '../graph/graph.ts';
import type { Locator } from './locate.ts';
import { isReservedPath } from '../paths/reserved.ts';
import type { NameResolver } from './resolve-names.ts';
import { varRefs } from './vars.ts';

export type { NameResolver } from './resolve-names.ts';

type Path = Array<string | number>;

const ROOTS_EVERYWHERE = ['params', 'vars', 'artifacts', 'stage', 'pipeline'];
/** A var is computed once per run, before any stage: it has no stage, item, artifacts or loop to read. */
const VAR_ROOTS = ['params', 'vars', 'pipeline'];

function stagePath(stage: StageOrLoop, loop?: LoopSpec): Path {
  return loop ? ['stages', loop.id, 'loop', 'stages', stage.id] : ['stages', stage.id];
}

function paramTypeOk(p: ParamSpec, value: unknown): boolean {
  switch (p.type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'list':
      return Array.isArray(value);
  }
}

function checkParams(spec: PipelineSpec, locator: Locator): void {
  for (const [name, p] of Object.entries(spec.params)) {
    if (p.default !== undefined && !paramTypeOk(p, p.default)) {
      locator.error(
        'invalid-param-default',
        ['params', name, 'default'],
        `default of param '${name}' is not ${p.type === 'integer' ? 'an' : 'a'} ${p.type}`,
      );
    }
    if (p.enum && p.default !== undefined && !p.enum.some((e) => JSON.stringify(e) === JSON.stringify(p.default))) {
      locator.error(
        'invalid-param-default',
        ['params', name, 'default'],
        `default of param '${name}' is not one of ${JSON.stringify(p.enum)}`,
      );
    }
  }
}

interface RefContext {
  spec: PipelineSpec;
  locator: Locator;
  stageIds: Set<string>;
  allowed: Set<string>;
  /** Said under an unknown name's message: why these names, here. */
  namesNote?: string;
}

function checkExpr(expr: Expr, at: Path, ctx: RefContext): string[] {
  const refs = { roots: new Set<string>(), artifactStages: new Set<string>() };
  collectRefs(expr, refs);
  for (const root of [...refs.roots].sort()) {
    if (!ctx.allowed.has(root)) {
      const hint = didYouMean(root, ctx.allowed);
      ctx.locator.error('unknown-name', at, `unknown name '${root}' in expression${hint ? `; did you mean '${hint}'?` : ''}`, {
        notes: [`names available here: ${[...ctx.allowed].sort().join(', ')}`, ...(ctx.namesNote ? [ctx.namesNote] : [])],
      });
    }
  }
  checkParamRefs(expr, at, ctx);
  checkVarRefs(expr, at, ctx);
  for (const message of constantErrors(expr)) ctx.locator.error('bad-expression', at, `bad expression: ${message}`);
  for (const s of [...refs.artifactStages].sort()) {
    if (!ctx.stageIds.has(s)) {
      const hint = didYouMean(s, ctx.stageIds);
      ctx.locator.error('unknown-stage', at, `artifacts.${s}: no stage named '${s}'${hint ? `; did you mean '${hint}'?` : ''}`);
    }
  }
  return [...refs.artifactStages];
}

function checkParamRefs(expr: Expr, at: Path, ctx: RefContext): void {
  const visit = (e: Expr): void => {
    if (e.t === 'get' && e.obj.t === 'ref' && e.obj.name === 'params' && !Object.hasOwn(ctx.spec.params, e.key)) {
      const hint = didYouMean(e.key, Object.keys(ctx.spec.params));
      ctx.locator.error(
        'unknown-param',
        at,
        `unknown param '${e.key}'${hint ? `; did you mean '${hint}'?` : '; declare it under params:'}`,
      );
    }
    for (const child of Object.values(e)) {
      if (Array.isArray(child)) child.forEach((c) => typeof c === 'object' && c && 't' in c && visit(c as Expr));
      else if (typeof child === 'object' && child && 't' in child) visit(child as Expr);
    }
  };
  visit(expr);
}

function checkVarRefs(expr: Expr, at: Path, ctx: RefContext): void {
  const declared = Object.keys(ctx.spec.vars);
  for (const name of [...varRefs(expr).names].sort()) {
    if (Object.hasOwn(ctx.spec.vars, name)) continue;
    const hint = didYouMean(name, declared);
    ctx.locator.error('unknown-var', at, `unknown var '${name}'${hint ? `; did you mean '${hint}'?` : '; declare it under vars:'}`, {
      span: ctx.locator.spanOfName(at, `vars.${name}`),
    });
  }
}

/** The vars' own expressions: the names they may read, and no var reading itself through others. */
function checkVars(spec: PipelineSpec, ctx: RefContext): void {
  const reads = new Map<string, string[]>();
  for (const [name, v] of Object.entries(spec.vars)) {
    const found: Array<{ t: Template; at: Path }> = [];
    withTemplates(v.value, ['vars', name], found);
    const names = new Set<string>();
    for (const { t, at } of found) {
      for (const e of templateExprs(t)) {
        checkExpr(e, at, { ...ctx, allowed: new Set(VAR_ROOTS), namesNote: 'a var is computed once per run, before any stage runs' });
        const refs = varRefs(e);
        for (const read of refs.names) names.add(read);
        if (refs.whole) ctx.locator.error('bad-expression', at, `var '${name}' reads vars whole; name the vars it needs (vars.NAME)`);
      }
    }
    reads.set(
      name,
      [...names].filter((n) => Object.hasOwn(spec.vars, n)),
    );
  }
  // findCycle gives the order data flows in; a var cycle reads better in the order vars are read.
  const cycle = findCycle(reads)?.reverse();
  if (cycle) {
    ctx.locator.error('var-cycle', ['vars', cycle[0] as string], `vars cycle: ${cycle.join(' -> ')}`, {
      which: 'key',
      notes: ['each var reads the next; a var may read other vars, but not itself through them'],
    });
  }
}

function templateExprs(t: Template): Expr[] {
  return t.parts.filter((p): p is Expr => typeof p !== 'string');
}

function isTemplate(v: unknown): v is Template {
  return typeof v === 'object' && v !== null && 'parts' in v && 'source' in v;
}

function withTemplates(value: unknown, at: Path, out: Array<{ t: Template; at: Path }>): void {
  if (isTemplate(value)) out.push({ t: value, at });
  else if (Array.isArray(value)) value.forEach((v, i) => withTemplates(v, [...at, i], out));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) withTemplates(v, [...at, k], out);
}

/** Every template of a stage with where it is, and the names valid in it. */
function stageTemplates(stage: StageSpec, at: Path): Array<{ t: Template; at: Path; extra: string[] }> {
  const list: Array<{ t: Template; at: Path; extra: string[] }> = [];
  const item = stage.foreach ? [stage.as] : [];
  stage.inputs.forEach((t, i) => list.push({ t, at: [...at, 'inputs', i], extra: item }));
  for (const [name, o] of Object.entries(stage.outputs)) list.push({ t: o.path, at: [...at, 'outputs', name], extra: item });
  const withList: Array<{ t: Template; at: Path }> = [];
  if (stage.kind === 'task') withTemplates(stage.with, [...at, 'with'], withList);
  else if ('shell' in stage.run) withList.push({ t: stage.run.shell, at: [...at, 'run'] });
  else stage.run.argv.forEach((t, i) => withList.push({ t, at: [...at, 'run', i] }));
  for (const [k, t] of Object.entries(stage.env)) withList.push({ t, at: [...at, 'env', k] });
  for (const w of withList) list.push({ ...w, extra: [...item, 'outputs', 'inputs'] });
  if (stage.foreach?.kind === 'list' && isTemplate(stage.foreach.items))
    list.push({ t: stage.foreach.items, at: [...at, 'foreach'], extra: [] });
  if (stage.foreach?.kind === 'glob')
    stage.foreach.patterns.forEach((t, i) => list.push({ t, at: [...at, 'foreach', 'glob', i], extra: [] }));
  return list;
}

function checkOutputPath(t: Template, at: () => Path, locator: Locator, seen: Map<string, string>, owner: string): void {
  if (!isConstant(t)) return;
  const p = t.source;
  const normalized = path.posix.normalize(p);
  if (path.isAbsolute(p) || normalized === '..' || normalized.startsWith('../')) {
    locator.error('output-outside-project', at(), `output '${p}' is outside the project; outputs must be paths inside the project root`);
  } else if (isReservedPath(normalized)) {
    locator.error(
      'output-in-refinery-folder',
      at(),
      `output '${p}' is inside a folder refinery manages itself (.refinery/state, cache, staging, rejected, runs)`,
    );
  } else if (seen.has(normalized)) {
    locator.error(
      'duplicate-output',
      at(),
      `stages '${seen.get(normalized)}' and '${owner}' both write '${normalized}'; each output needs one writer`,
    );
  } else seen.set(normalized, owner);
}

function checkStage(
  stage: StageSpec,
  loop: LoopSpec | undefined,
  ctx: RefContext & { resolver: NameResolver; outputs: Map<string, string> },
): string[] {
  const at = stagePath(stage, loop);
  const { locator, resolver } = ctx;
  if (stage.kind === 'task' && !resolver.taskFile(stage.task)) {
    const hint = didYouMean(stage.task, resolver.taskNames());
    locator.error('unknown-task', [...at, 'task'], `unknown task '${stage.task}'${hint ? `; did you mean '${hint}'?` : ''}`, {
      notes: [`a task is a module tasks/${stage.task}.ts in the project or in refinery`],
    });
  }
  for (const [name, o] of Object.entries(stage.outputs)) {
    if (o.schema && !resolver.schemaFile(o.schema)) {
      const hint = didYouMean(o.schema, resolver.schemaNames());
      locator.error(
        'unknown-schema',
        [...at, 'outputs', name, 'schema'],
        `unknown schema '${o.schema}'${hint ? `; did you mean '${hint}'?` : ''}`,
        {
          notes: [`a schema is a file schemas/${o.schema}.schema.json in the project or in refinery`],
        },
      );
    }
    // Where the path is written ({ path: ... } or the plain form) is looked up only for a message.
    const pathAt = (): Path =>
      locator.has([...at, 'outputs', name, 'path']) ? [...at, 'outputs', name, 'path'] : [...at, 'outputs', name];
    checkOutputPath(o.path, pathAt, locator, ctx.outputs, stage.id);
  }
  if (stage.pool && !Object.hasOwn(ctx.spec.pools, stage.pool)) {
    const hint = didYouMean(stage.pool, Object.keys(ctx.spec.pools));
    locator.error(
      'unknown-pool',
      [...at, 'pool'],
      `unknown pool '${stage.pool}'${hint ? `; did you mean '${hint}'?` : '; declare it under pools:'}`,
    );
  }
  const artifactStages: string[] = [];
  const base = new Set([...ROOTS_EVERYWHERE, ...(loop ? ['loop'] : [])]);
  for (const { t, at: tAt, extra } of stageTemplates(stage, at)) {
    for (const e of templateExprs(t)) artifactStages.push(...checkExpr(e, tAt, { ...ctx, allowed: new Set([...base, ...extra]) }));
  }
  if (stage.when) {
    const allowed = new Set([...base, ...(stage.foreach ? [stage.as] : [])]);
    artifactStages.push(...checkExpr(stage.when, [...at, 'when'], { ...ctx, allowed }));
  }
  const selfAllowed = new Set([...base, 'self', ...(stage.foreach ? [stage.as] : [])]);
  if (stage.staleIf) artifactStages.push(...checkExpr(stage.staleIf, [...at, 'stale_if'], { ...ctx, allowed: selfAllowed }));
  if (stage.finalIf) artifactStages.push(...checkExpr(stage.finalIf, [...at, 'final_if'], { ...ctx, allowed: selfAllowed }));
  return artifactStages;
}

function checkNeeds(needs: string[], at: Path, ids: Set<string>, locator: Locator): void {
  needs.forEach((need, i) => {
    if (!ids.has(need)) {
      const hint = didYouMean(need, ids);
      locator.error('unknown-stage', [...at, 'needs', i], `needs unknown stage '${need}'${hint ? `; did you mean '${hint}'?` : ''}`);
    }
  });
}

/** Semantic checks after the shape is valid; every problem goes to the locator. */
export function checkPipeline(spec: PipelineSpec, locator: Locator, resolver: NameResolver, declaredIds: readonly string[] = []): void {
  checkParams(spec, locator);
  const ids = new Set<string>(declaredIds);
  const owner = new Map<string, string>(); // inner stage id -> loop id
  for (const s of spec.stages) {
    ids.add(s.id);
    if (s.kind !== 'loop') continue;
    for (const inner of s.stages) {
      if (ids.has(inner.id)) {
        locator.error(
          'duplicate-stage',
          stagePath(inner, s),
          `duplicate stage '${inner.id}'; stage names are unique across the pipeline, loops included`,
          { which: 'key' },
        );
      }
      ids.add(inner.id);
      owner.set(inner.id, s.id);
    }
  }
  const ctx = { spec, locator, stageIds: ids, allowed: new Set<string>(), resolver, outputs: new Map<string, string>() };
  checkVars(spec, ctx);
  const nodes: GraphNode[] = [];
  const node = (stage: StageSpec, loop: LoopSpec | undefined, artifactStages: string[]): GraphNode => ({
    id: stage.id,
    needs: [...stage.needs, ...artifactStages].map((n) => (loop && owner.get(n) === loop.id ? n : (owner.get(n) ?? n))),
    inputs: stage.inputs.filter(isConstant).map((t) => path.posix.normalize(t.source)),
    outputs: Object.values(stage.outputs)
      .map((o) => o.path)
      .filter(isConstant)
      .map((t) => path.posix.normalize(t.source)),
  });
  for (const s of spec.stages) {
    if (s.kind === 'loop') {
      checkNeeds(s.needs, stagePath(s), ids, locator);
      const inner = s.stages.map((st) => {
        checkNeeds(st.needs, stagePath(st, s), ids, locator);
        return node(st, s, checkStage(st, s, ctx));
      });
      if (s.until) checkExpr(s.until, [...stagePath(s), 'loop', 'until'], { ...ctx, allowed: new Set([...ROOTS_EVERYWHERE, 'loop']) });
      // Outside the loop, the loop is one node: it needs what its stages need from outside.
      const innerIds = new Set(s.stages.map((st) => st.id));
      nodes.push(...inner);
      nodes.push({ id: s.id, needs: [...s.needs, ...innerIds], inputs: [], outputs: [] });
      for (const n of inner) (n.needs as string[]).push(...s.needs);
    } else {
      checkNeeds(s.needs, stagePath(s), ids, locator);
      nodes.push(node(s, undefined, checkStage(s, undefined, ctx)));
    }
  }
  const graph = buildGraph(nodes.map((n) => ({ ...n, needs: n.needs.filter((x) => ids.has(x)) })));
  const cycle = findCycle(graph.deps);
  if (cycle) {
    const first = cycle[0] as string;
    const loop = spec.stages.find((s) => s.kind === 'loop' && s.stages.some((st) => st.id === first)) as LoopSpec | undefined;
    const stage = spec.stages.find((s) => s.id === first) ?? loop?.stages.find((s) => s.id === first);
    locator.error('dependency-cycle', stage ? stagePath(stage, loop) : [], `dependency cycle: ${cycle.join(' -> ')}`, {
      which: 'key',
      notes: ["remove one of these needs, or one of the inputs that is another stage's output"],
    });
  }
}
