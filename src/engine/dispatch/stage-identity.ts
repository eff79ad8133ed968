// How a job names a stage so that a worker can tell whether its own checkout holds the same one:
// the pipeline as a path inside the project (or a built-in's name, never a path on the
// coordinator's machine), and a hash of the stage's definition as the pipeline file states it.
import path from 'node:path';
import { existsSync } from 'node:fs';
import type { StageInstance } from '../types/plan.ts';
import { stableJson } from '../executor/fingerprint.ts';
import { digest } from '../state/hash-file.ts';
import { entryPathProblem } from '../remote-cache/remote-cache.ts';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

const BUILTIN = 'builtin:';
const NAME = /^[a-z0-9][a-z0-9-]*$/i;

/** Each stage's spec as stable JSON, made once: a foreach stage's instances share the spec (and its list of items). */
const specJson = new WeakMap<object, string>();

/**
 * A hash of what the pipeline file says of this stage instance (its spec, resolved inputs and
 * outputs, what it needs, its foreach item): the same wherever the file is. Its description and
 * where it sits in the file do not count.
 */
export function definitionHash(inst: StageInstance): string {
  let spec = specJson.get(inst.spec);
  if (spec === undefined) {
    const { description: _d, ...rest } = inst.spec;
    spec = stableJson(rest);
    specJson.set(inst.spec, spec);
  }
  // The text stableJson({ spec, inputs, outputs, needs, vars }) makes: its keys in that order.
  return digest(
    `{"inputs":${stableJson(inst.inputs)},"needs":${stableJson(inst.needs)},"outputs":${stableJson(inst.outputs)},"spec":${spec},"vars":${stableJson(inst.vars)}}`,
  );
}

/** The pipeline file as a job names it; undefined when it is neither in the project nor one of refinery's. */
export function pipelineRef(root: string, file: string): string | undefined {
  const rel = path.relative(root, file);
  if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep).join('/');
  const builtin = path.relative(path.join(PACKAGE_ROOT, 'pipelines'), file);
  const name = builtin.replace(/\.ya?ml$/, '');
  if (!builtin.includes(path.sep) && NAME.test(name)) return `${BUILTIN}${name}`;
  return undefined;
}

/** The file a job's pipeline names in this checkout, or why there is none. */
export function pipelineFileOf(root: string, ref: string): { file: string } | { problem: string } {
  if (ref.startsWith(BUILTIN)) {
    const name = ref.slice(BUILTIN.length);
    if (!NAME.test(name)) return { problem: `the built-in pipeline name '${name}' is malformed` };
    for (const ext of ['.yaml', '.yml']) {
      const file = path.join(PACKAGE_ROOT, 'pipelines', `${name}${ext}`);
      if (existsSync(file)) return { file };
    }
    return { problem: `this refinery has no built-in pipeline '${name}'` };
  }
  const problem = entryPathProblem(ref);
  if (problem) return { problem: `the pipeline is named by ${problem}` };
  if (!/\.ya?ml$/.test(ref)) return { problem: `the pipeline ${ref} is not a YAML file` };
  const file = path.join(root, ref);
  return existsSync(file) ? { file } : { problem: `this checkout has no ${ref}` };
}
