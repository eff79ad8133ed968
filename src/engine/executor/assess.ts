import path from 'node:path';
import type { StageInstance } from '../types/plan.ts';
import type { StageOutcomeCode } from '../types/events.ts';
import type { LazyRecord } from '../expr/evaluate.ts';
import { evaluateCondition, ExprEvalError } from '../expr/evaluate.ts';
import type { FileHashes } from '../state/file-hashes.ts';
import type { Observations } from '../state/observations.ts';
import { FileReadError } from '../state/file-hashes.ts';
import { digest } from '../state/hash-file.ts';
import type { FingerprintParts, StageRecord } from '../state/stage-state.ts';
import { explainChange, list } from './explain.ts';
import { changedReads } from './task-reads.ts';
import { fingerprintOf, fingerprintParts, resolveInputs, stableJson } from './fingerprint.ts';
import { renderCommand, renderEnv, renderWith, scopeFor } from './render.ts';
import { existsInProject, paramFolders } from '../paths/inside-project.ts';
import { paramValues } from './param-values.ts';

export interface AssessContext {
  root: string;
  params: Record<string, unknown>;
  vars: Record<string, unknown>;
  pipeline: string;
  hashes: FileHashes;
  force: boolean;
  /** Why a forced stage runs (default `--force`). */
  forceReason?: string;
  codeHash(inst: StageInstance): string;
  /** Where a task's source is, to name it when it changed. */
  taskFile?(name: string): string | undefined;
  schemaFile(name: string): string | undefined;
  observations?: Observations;
  /** The stage's own current outputs, for `stale_if` (`self.OUTPUT`). */
  selfArtifacts(inst: StageInstance): LazyRecord;
}

/** Hash of what a stage runs: the command template, or the task's source file (one stat per run). */
export function stageCodeHash(
  inst: StageInstance,
  root: string,
  hashes: FileHashes,
  taskFile: (name: string) => string | undefined,
  observations?: Observations,
): string {
  if (inst.spec.kind === 'run')
    return digest(`run:${stableJson('shell' in inst.spec.run ? inst.spec.run.shell.source : inst.spec.run.argv.map((t) => t.source))}`);
  const file = taskFile(inst.spec.task);
  if (!file) return 'missing';
  const rel = path.relative(root, file);
  observations?.file(rel, hashes.stamp(rel));
  // By content only: a built-in task lives wherever refinery is installed.
  return hashes.hash(rel) ?? `unreadable:${inst.spec.task}`;
}

/**
 * `fresh` with `restamp`: its record was made of the same reads under another fingerprint (a
 * `needs:` dropped, or a record of an earlier refinery): the caller may record the new one.
 */
export type Assessment =
  | { kind: 'skip'; code: 'when-false'; reason: string }
  | { kind: 'fail'; code: StageOutcomeCode; reason: string }
  | { kind: 'fresh'; fingerprint: string; parts: FingerprintParts; restamp?: boolean }
  | { kind: 'run'; fingerprint: string; parts: FingerprintParts; inputs: string[]; reasons: string[] };

/** What a stage sees of the stages it depends on, once they have settled. */
export interface Upstream {
  /** Each stage it `needs:` -> what that stage wrote (outputsDigest), or 'skipped'. */
  needed: Record<string, string>;
  /** Stages it depends on that were skipped (their `when` was false): they wrote nothing. */
  skipped: readonly string[];
  /**
   * For `refinery plan`: the files that stages which will run first may write again. They are
   * judged as this stage last read them (and may be missing now): whether they change is known
   * only once those stages have run.
   */
  rewrites?: (path: string) => boolean;
}

function outputProblems(inst: StageInstance, recorded: StageRecord['outputs'], hashes: FileHashes): string[] {
  const problems: string[] = [];
  for (const [name, o] of Object.entries(inst.outputs)) {
    const stamp = hashes.stamp(o.path);
    if (!stamp) problems.push(`output ${o.path} is missing`);
    else if (stamp[3] !== recorded[name]?.[3]) problems.push(`output ${o.path} was modified`);
  }
  return problems;
}

/** What `refinery why` calls the stage's code: its task file (relative to the project when inside it), or its command. */
function codeName(inst: StageInstance, ctx: AssessContext): string {
  if (inst.spec.kind === 'run') return 'its command';
  const file = ctx.taskFile?.(inst.spec.task);
  if (!file) return `task '${inst.spec.task}'`;
  const rel = path.relative(ctx.root, file);
  return `task file ${rel.startsWith('..') || path.isAbsolute(rel) ? file : rel}`;
}

function schemaHashes(inst: StageInstance, ctx: AssessContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const o of Object.values(inst.outputs)) {
    if (!o.schema) continue;
    const file = ctx.schemaFile(o.schema);
    if (file) ctx.observations?.file(path.relative(ctx.root, file), ctx.hashes.stamp(path.relative(ctx.root, file)));
    out[o.schema] = file ? (ctx.hashes.hash(path.relative(ctx.root, file)) ?? 'unreadable') : 'missing';
  }
  return out;
}

/**
 * Whether a stage whose dependencies have finished must run, and why: its `when`, its inputs,
 * its fingerprint against the last record, and its outputs on disk.
 */
export function assessStage(
  inst: StageInstance,
  upstream: Upstream,
  artifacts: LazyRecord,
  record: StageRecord | undefined,
  ctx: AssessContext,
): Assessment {
  try {
    const assessment = assessInputs(inst, upstream, artifacts, record, ctx);
    // A stage that runs records its outputs when it publishes them; the others' are recorded as seen now.
    if (ctx.observations && assessment.kind !== 'run')
      for (const o of Object.values(inst.outputs)) ctx.observations.file(o.path, ctx.hashes.stamp(o.path));
    return assessment;
  } catch (error) {
    // Unreadable is not missing: a fingerprint cannot be made, so the stage cannot be judged up to date.
    if (error instanceof FileReadError)
      return {
        kind: 'fail',
        code: 'unreadable-input',
        reason: `${error.message} (make it readable, or take it out of the stage's inputs)`,
      };
    throw error;
  }
}

/** A skipped upstream (its `when` false) wrote nothing, which explains the missing input better than its absence from the plan. */
export function missingInputReason(missing: readonly string[], skipped: readonly string[]): string {
  const files = missing.join(', ');
  return skipped.length > 0
    ? `input ${files} does not exist: upstream ${skipped.join(', ')} was skipped, and no other stage writes it`
    : `input ${files} does not exist, and no stage writes it`;
}

function assessInputs(
  inst: StageInstance,
  upstream: Upstream,
  artifacts: LazyRecord,
  record: StageRecord | undefined,
  ctx: AssessContext,
): Assessment {
  const targets = Object.fromEntries(Object.entries(inst.outputs).map(([k, o]) => [k, o.path]));
  const folders = paramFolders(ctx.params);
  const onDisk = (p: string): boolean => existsInProject(ctx.root, p, folders);
  const observations = ctx.observations;
  const exists = observations ? (p: string) => observations.probe(p, onDisk) : onDisk;
  const base = { params: ctx.params, vars: ctx.vars, pipeline: ctx.pipeline, artifacts, outputs: targets, exists };
  try {
    if (inst.spec.when && !evaluateCondition(inst.spec.when, scopeFor(inst, { ...base, inputs: [] })))
      return { kind: 'skip', code: 'when-false', reason: 'when: condition is false' };
    const inputs = resolveInputs(ctx.root, inst, ctx.hashes, observations);
    const missing = upstream.rewrites ? inputs.missing.filter((p) => !upstream.rewrites?.(p)) : inputs.missing;
    if (missing.length > 0) return { kind: 'fail', code: 'missing-input', reason: missingInputReason(missing, upstream.skipped) };
    const scope = scopeFor(inst, { ...base, inputs: inputs.files });
    const rendered = {
      with: inst.spec.kind === 'task' ? renderWith(inst.spec.with, scope) : null,
      command: inst.spec.kind === 'run' ? renderCommand(inst, scope) : null,
      env: renderEnv(inst, scope),
    };
    const parts = fingerprintParts(
      {
        codeHash: ctx.codeHash(inst),
        paramsJson: stableJson({ ...rendered, outputs: inst.outputs }),
        inputFiles: inputs.files,
        needed: upstream.needed,
        schemaHashes: schemaHashes(inst, ctx),
        root: ctx.root,
      },
      ctx.hashes,
    );
    const fingerprint = fingerprintOf(parts);
    const same = record?.fingerprint === fingerprint;
    // Kept in the record for `refinery why`; not needed to judge a stage whose fingerprint holds.
    const keepValues = (): void => {
      parts.values ??= paramValues(rendered, inst.outputs);
    };
    if (!same) keepValues();
    let reasons = ctx.force
      ? [ctx.forceReason ?? '--force']
      : same
        ? []
        : explainChange(parts, record, codeName(inst, ctx), upstream.rewrites);
    // Nothing it reads changed (whatever the fingerprint says): its outputs must still be what it wrote.
    if (reasons.length === 0 && record) reasons = outputProblems(inst, record.outputs, ctx.hashes);
    // What its last run found and read beyond its inputs (a depfile's files) must be as it read them.
    if (reasons.length === 0 && record?.parts.reads) {
      const changed = changedReads(record.parts.reads, ctx.hashes, ctx.observations);
      if (changed.length > 0) reasons.push(`${list(changed)} changed (read by its last run)`);
      else parts.reads = record.parts.reads;
    }
    if (
      reasons.length === 0 &&
      inst.spec.staleIf &&
      evaluateCondition(inst.spec.staleIf, { ...scope, vars: { ...scope.vars, self: ctx.selfArtifacts(inst) } })
    ) {
      reasons.push('stale_if: its last result asks to be redone');
    }
    if (reasons.length === 0) return { kind: 'fresh', fingerprint, parts, ...(same ? {} : { restamp: true }) };
    keepValues();
    return { kind: 'run', fingerprint, parts, inputs: inputs.files, reasons };
  } catch (error) {
    if (error instanceof ExprEvalError) return { kind: 'fail', code: 'expression-failed', reason: error.message };
    throw error;
  }
}
