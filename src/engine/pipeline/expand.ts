import { statSync } from 'node:fs';
import path from 'node:path';
import type { Template } from '../types/expr.ts';
import type { LoopInstance, Plan, ResolvedOutput, StageInstance } from '../types/plan.ts';
import type { LoopSpec, PipelineSpec, StageSpec } from '../types/pipeline.ts';
import type { Diagnostic, ParamPathCause } from '../types/source.ts';
import { collectRefs } from '../expr/template.ts';
import { evaluateCondition, ExprEvalError, renderTemplate, toText, type LazyRecord } from '../expr/evaluate.ts';
import { expandGlob, FolderListings } from '../paths/walk.ts';
import { isGlob, staticPrefix } from '../paths/glob.ts';
import type { Observations } from '../state/observations.ts';
import { isReservedPath } from '../paths/reserved.ts';
import { existsInProject, paramFolders } from '../paths/inside-project.ts';
import { foreachEffects } from './foreach-files.ts';
import { sha256Hex } from '../state/hash-file.ts';
import { computeVars } from './vars.ts';

export interface GlobItem {
  path: string;
  name: string;
  stem: string;
  dir: string;
}

export interface ExpandContext {
  root: string;
  params: Record<string, unknown>;
  /** The `artifacts` value seen by expressions evaluated while expanding (foreach over artifacts). */
  artifacts: LazyRecord;
  /** Records folders listed and paths probed, for the no-op check of the next run. */
  observations?: Observations;
}

const NEEDS_NORMALIZING = /\/\/|(^|\/)\.\.?(\/|$)|\/$/;

/** `a//b/./c/` as `a/b/c`; names are kept byte for byte (a backslash is part of a POSIX file name). */
export function normalizeRelative(p: string): string {
  if (!NEEDS_NORMALIZING.test(p)) return p;
  return path.posix
    .normalize(p)
    .replace(/^\.\//, '')
    .replace(/(.)\/$/, '$1');
}

function globItem(p: string): GlobItem {
  const name = path.posix.basename(p);
  const ext = path.posix.extname(name);
  return { path: p, name, stem: ext ? name.slice(0, -ext.length) : name, dir: path.posix.dirname(p) };
}

/** A long text part of a combination's key, shortened and made unique by a hash of the whole. */
function keyPart(item: unknown, index: number): string {
  const key = itemKey(item, index);
  return key.length <= 48 ? key : `${key.slice(0, 40)}…${sha256Hex(key).slice(0, 6)}`;
}

function itemKey(item: unknown, index: number): string {
  if (typeof item === 'string' || typeof item === 'number' || typeof item === 'boolean') return String(item);
  // One combination of product(): its parts' keys, so `run[a.yaml, What is…, 1]`, not a position that shifts.
  if (Array.isArray(item) && item.length > 0) return item.map((x) => keyPart(x, index)).join(', ');
  if (item && typeof item === 'object') {
    const o = item as Record<string, unknown>;
    for (const k of ['path', 'name', 'id']) if (typeof o[k] === 'string' || typeof o[k] === 'number') return String(o[k]);
  }
  return String(index);
}

/** `exists(path)` in an expression evaluated while expanding, its answers recorded for the no-op check. */
function projectExists(ctx: ExpandContext): (p: string) => boolean {
  // Only inside the project, or in a folder a param names (logs outside the project), where it is.
  const folders = paramFolders(ctx.params);
  const exists = (p: string): boolean => existsInProject(ctx.root, p, folders);
  const observations = ctx.observations;
  return observations ? (p) => observations.probe(p, exists) : exists;
}

class Expander {
  readonly diagnostics: Diagnostic[] = [];
  /** stage id -> instance ids, per loop iteration scope ('' for top level). */
  private readonly byStage = new Map<string, string[]>();
  /**
   * The folders the first expansion listed, for the stages' globs to share (the analyze
   * pipeline's turns and legacy logs both list every log folder); none for a loop's iterations,
   * expanded later as the run reaches them, when folders may have changed.
   */
  listings: FolderListings | undefined;

  constructor(
    private readonly spec: PipelineSpec,
    private readonly ctx: ExpandContext,
    private readonly named: Record<string, unknown>,
  ) {}

  private vars(stage: StageSpec | LoopSpec, extra: Record<string, unknown>): Record<string, unknown> {
    return {
      params: this.ctx.params,
      vars: this.named,
      pipeline: { name: this.spec.name },
      stage: { id: stage.id },
      artifacts: this.ctx.artifacts,
      ...extra,
    };
  }

  private render(
    t: Template,
    vars: Record<string, unknown>,
    where: StageSpec | LoopSpec,
    files?: ReturnType<typeof foreachEffects>,
  ): unknown {
    try {
      return renderTemplate(t, { vars, effects: { exists: () => false, ...files } });
    } catch (error) {
      if (!(error instanceof ExprEvalError)) throw error;
      this.diagnostics.push({
        severity: 'error',
        code: 'expression-failed',
        message: `stage '${where.id}': ${error.message} in '${t.source}'`,
        ...(where.span ? { span: where.span } : {}),
      });
      return '';
    }
  }

  private items(stage: StageSpec, vars: Record<string, unknown>): Array<{ key: string; value: unknown }> {
    const f = stage.foreach;
    if (!f) return [{ key: '', value: undefined }];
    if (f.kind === 'glob') {
      const found = new Set<string>();
      const prefixes: string[] = [];
      for (const p of f.patterns) {
        const pattern = normalizeRelative(toText(this.render(p, vars, stage)));
        prefixes.push(staticPrefix(pattern));
        if (!f.allowEmpty && !this.globRootExists(stage, p, pattern)) continue;
        const listing = this.listings ?? ((dir: string, mtime: number | null) => this.ctx.observations?.dir(dir, mtime));
        for (const m of expandGlob(this.ctx.root, pattern, f.type, listing)) found.add(m);
      }
      // Instances are named by the part of the path the glob matched: turn[log_1/turn_2].
      const common = prefixes.every((p) => p === prefixes[0]) && prefixes[0] ? `${prefixes[0]}/` : '';
      return [...found].sort().map((p) => ({ key: common && p.startsWith(common) ? p.slice(common.length) : p, value: globItem(p) }));
    }
    const files = foreachEffects(this.ctx.root, this.ctx.params, this.ctx.observations);
    const raw = Array.isArray(f.items) ? f.items : this.render(f.items, vars, stage, files);
    const list = Array.isArray(raw) ? raw : raw === '' || raw === undefined || raw === null ? [] : [raw];
    return list.map((value, i) => ({ key: itemKey(value, i), value }));
  }

  /**
   * A glob's fixed leading folder (the whole path for a pattern without wildcards) must exist:
   * a typo in a path param would otherwise expand to no stage and a green "nothing to do".
   * `allow_empty: true` on the foreach says an empty set is expected.
   */
  private globRootExists(stage: StageSpec, template: Template, pattern: string): boolean {
    const root = isGlob(pattern) ? staticPrefix(pattern) : pattern;
    if (root === '') return true;
    const abs = path.resolve(this.ctx.root, root);
    let problem: string | undefined;
    let kind: ParamPathCause['problem'] = 'cannot be read';
    try {
      if (isGlob(pattern) && !statSync(abs).isDirectory()) [problem, kind] = ['is not a folder', 'is not a folder'];
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') [problem, kind] = ['does not exist', 'does not exist'];
      else problem = `cannot be read (${code ?? (error as Error).message})`;
    }
    if (problem === undefined) return true;
    const rendered = template.source === pattern ? `'${pattern}'` : `'${template.source}' (= '${pattern}')`;
    const where = path.isAbsolute(root) ? root : `${root} (${abs})`;
    // A path made from params is fixed on the command line, not in the pipeline file.
    const used = [...new Set(Array.from(template.source.matchAll(/\bparams\.([A-Za-z_]\w*)/g), (m) => m[1] as string))];
    // Only the params the missing folder is made of: in `${params.logs}/${params.runs}/turn_*`, a missing logs
    // folder is not fixed by another `runs` glob.
    const making = used.filter((p) => {
      const value = String(this.ctx.params[p] ?? '');
      return value !== '' && root.includes(path.normalize(value).replace(/\/$/, ''));
    });
    const params = making.length > 0 ? making : used;
    const fix = params.length ? `pass an existing path with ${params.map((p) => `--param ${p}=PATH`).join(' or ')}` : 'fix the path';
    this.diagnostics.push({
      severity: 'error',
      code: 'foreach-root-missing',
      message: `stage '${stage.id}': foreach glob ${rendered}: ${where} ${problem}; ${fix}, or, if the set may be empty, add allow_empty: true to the foreach`,
      ...(stage.span ? { span: stage.span } : {}),
      ...(params.length
        ? { paramPath: { params: Object.fromEntries(params.map((p) => [p, this.ctx.params[p]])), path: root, problem: kind } }
        : {}),
    });
    return false;
  }

  private outputs(stage: StageSpec, vars: Record<string, unknown>): Record<string, ResolvedOutput> {
    const out: Record<string, ResolvedOutput> = {};
    for (const name of Object.keys(stage.outputs).sort()) {
      const o = stage.outputs[name] as StageSpec['outputs'][string];
      const p = normalizeRelative(toText(this.render(o.path, vars, stage)));
      if (path.isAbsolute(p) || p === '..' || p.startsWith('../') || isReservedPath(p)) {
        this.diagnostics.push({
          severity: 'error',
          code: 'output-outside-project',
          message: `stage '${stage.id}': output '${name}' resolves to '${p}', outside the project or inside a folder refinery manages`,
          ...(stage.span ? { span: stage.span } : {}),
        });
      }
      out[name] = { path: p, ...(o.schema ? { schema: o.schema } : {}) };
    }
    return out;
  }

  /** Instance ids of `stageId` as seen from a scope: the same loop iteration first, then the top level. */
  resolve(stageId: string, scope: string): string[] | undefined {
    return this.byStage.get(`${scope}|${stageId}`) ?? this.byStage.get(`|${stageId}`);
  }

  private referencedStages(stage: StageSpec): string[] {
    const refs = { roots: new Set<string>(), artifactStages: new Set<string>() };
    if (stage.when) collectRefs(stage.when, refs);
    return [...refs.artifactStages];
  }

  expandStage(stage: StageSpec, scope: { key: string; loop?: { id: string; iteration: number; max: number } }): StageInstance[] {
    const loopVars = scope.loop
      ? {
          loop: {
            iteration: scope.loop.iteration,
            round: String(scope.loop.iteration).padStart(3, '0'),
            max: scope.loop.max,
            first: scope.loop.iteration === 1,
          },
        }
      : {};
    const base = this.vars(stage, loopVars);
    const needs = [...new Set([...stage.needs, ...this.referencedStages(stage)])].sort();
    const needIds = needs.flatMap((n) => this.resolve(n, scope.key) ?? this.loopGate(n));
    const prefix = scope.loop ? `${scope.loop.id}#${scope.loop.iteration}.` : '';
    const instances = this.items(stage, base)
      .filter(({ value }) => this.staticWhen(stage, { ...base, [stage.as]: value }))
      .map(({ key, value }) => {
        const vars = stage.foreach ? { ...base, [stage.as]: value } : base;
        const inputs = stage.inputs.flatMap((t) => {
          const v = this.render(t, vars, stage);
          return (Array.isArray(v) ? v.map(toText) : [toText(v)]).filter((s) => s !== '').map(normalizeRelative);
        });
        return {
          id: `${prefix}${stage.id}${stage.foreach ? `[${key}]` : ''}`,
          stageId: stage.id,
          spec: stage,
          vars: { ...loopVars, ...(stage.foreach ? { [stage.as]: value } : {}) },
          inputs: [...new Set(inputs)].sort(),
          outputs: this.outputs(stage, vars),
          needs: needIds,
          ...(scope.loop ? { loop: { id: scope.loop.id, iteration: scope.loop.iteration } } : {}),
        } satisfies StageInstance;
      });
    const distinct = this.distinctInstances(stage, instances);
    this.byStage.set(
      `${scope.key}|${stage.id}`,
      distinct.map((i) => i.id),
    );
    return distinct;
  }

  /** Two items with one key would be one instance run twice: the run cannot tell them apart. */
  private distinctInstances(stage: StageSpec, instances: StageInstance[]): StageInstance[] {
    const seen = new Set<string>();
    for (const inst of instances) {
      if (!seen.has(inst.id)) {
        seen.add(inst.id);
        continue;
      }
      this.diagnostics.push({
        severity: 'error',
        code: 'duplicate-foreach-key',
        message: `stage '${stage.id}': two foreach items have the key '${inst.id.slice(inst.id.indexOf('[') + 1, -1)}' (instance '${inst.id}'); give each item its own name, path or id, or list each value once`,
        ...(stage.span ? { span: stage.span } : {}),
      });
      return instances.filter((i, n) => instances.findIndex((j) => j.id === i.id) === n);
    }
    return instances;
  }

  /**
   * A foreach stage's `when` that reads no artifacts is decided while expanding: items it
   * rejects get no stage at all (a legacy log dir without turn folders, say).
   */
  private staticWhen(stage: StageSpec, vars: Record<string, unknown>): boolean {
    if (!stage.foreach || !stage.when) return true;
    const refs = { roots: new Set<string>(), artifactStages: new Set<string>() };
    collectRefs(stage.when, refs);
    if (refs.roots.has('artifacts')) return true;
    try {
      return evaluateCondition(stage.when, { vars, effects: { exists: projectExists(this.ctx) } });
    } catch (error) {
      if (!(error instanceof ExprEvalError)) throw error;
      this.diagnostics.push({
        severity: 'error',
        code: 'expression-failed',
        message: `stage '${stage.id}': when: ${error.message}`,
        ...(stage.span ? { span: stage.span } : {}),
      });
      return false;
    }
  }

  /** A stage inside a loop, named from outside it, means the whole loop. */
  private loopGate(stageId: string): string[] {
    const loop = this.spec.stages.find((s) => s.kind === 'loop' && (s.id === stageId || s.stages.some((t) => t.id === stageId)));
    return loop ? [loop.id] : [];
  }

  loopMax(loop: LoopSpec): number {
    if (typeof loop.max === 'number') return loop.max;
    const n = Number(this.render(loop.max, this.vars(loop, {}), loop));
    if (!Number.isInteger(n) || n < 1) {
      this.diagnostics.push({
        severity: 'error',
        code: 'invalid-loop-max',
        message: `loop '${loop.id}': max must be a whole number ≥ 1, got '${toText(n)}'`,
        ...(loop.span ? { span: loop.span } : {}),
      });
      return 1;
    }
    return n;
  }

  loopNeeds(loop: LoopSpec): string[] {
    return loop.needs.flatMap((n) => this.resolve(n, '') ?? this.loopGate(n));
  }
}

function checkDuplicateOutputs(instances: readonly StageInstance[], diagnostics: Diagnostic[]): void {
  const writer = new Map<string, string>();
  for (const inst of instances) {
    for (const o of Object.values(inst.outputs)) {
      const other = writer.get(o.path);
      if (other !== undefined && other !== inst.id)
        diagnostics.push({
          severity: 'error',
          code: 'duplicate-output',
          message: `stages '${other}' and '${inst.id}' both write '${o.path}'; each output needs one writer`,
        });
      writer.set(o.path, inst.id);
    }
  }
}

export interface Expansion {
  plan: Plan;
  diagnostics: Diagnostic[];
  /** Expands one iteration of a loop; the executor calls it as iterations are reached. */
  expandIteration(loop: LoopInstance, iteration: number): { instances: StageInstance[]; diagnostics: Diagnostic[] };
}

/** Turns a checked pipeline into concrete stage instances (foreach expanded, templates rendered). */
export function expandPipeline(spec: PipelineSpec, ctx: ExpandContext): Expansion {
  const named = computeVars(spec, ctx.params, projectExists(ctx));
  const expander = new Expander(spec, ctx, named.vars);
  expander.diagnostics.push(...named.diagnostics);
  const instances: StageInstance[] = [];
  const loops: LoopInstance[] = [];
  expander.listings = new FolderListings(ctx.root, (dir, mtime) => ctx.observations?.dir(dir, mtime));
  for (const stage of spec.stages) {
    if (stage.kind === 'loop') loops.push({ id: stage.id, spec: stage, max: expander.loopMax(stage), needs: expander.loopNeeds(stage) });
    else instances.push(...expander.expandStage(stage, { key: '' }));
  }
  expander.listings = undefined;
  checkDuplicateOutputs(instances, expander.diagnostics);
  const plan: Plan = { pipeline: spec, root: ctx.root, params: ctx.params, vars: named.vars, instances, loops };
  return {
    plan,
    diagnostics: expander.diagnostics,
    expandIteration(loop, iteration) {
      const before = expander.diagnostics.length;
      const scope = { key: `${loop.id}#${iteration}`, loop: { id: loop.id, iteration, max: loop.max } };
      const made = loop.spec.stages.flatMap((s) => expander.expandStage(s, scope));
      const previous =
        iteration > 1 ? loop.spec.stages.flatMap((s) => expander.resolve(s.id, `${loop.id}#${iteration - 1}`) ?? []) : loop.needs;
      for (const inst of made) {
        const ordered = previous.filter((id) => !inst.needs.includes(id));
        if (ordered.length > 0) inst.ordered = ordered;
        inst.needs = [...new Set([...inst.needs, ...previous])].sort();
      }
      const diagnostics = expander.diagnostics.slice(before);
      checkDuplicateOutputs([...instances, ...made], diagnostics);
      return { instances: made, diagnostics };
    },
  };
}
