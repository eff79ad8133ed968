import { cpSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, tempProject, type TempProject } from './project.ts';

/** The bundled offline refine example's params, as `--param` flags (what `just refine` passes in refinery's clone). */
export const EXAMPLE_REFINE_PARAMS: readonly string[] = [
  ['task_file', 'examples/refine/task.md'],
  ['deliverable', 'examples/refine/deliverable/README.md,examples/refine/deliverable/slugify.mjs'],
  ['previous', 'examples/refine/previous/README.md'],
  ['writer', 'example-writer'],
  ['judges', 'example-judge-a,example-judge-b,example-judge-c'],
  ['guard', 'example-judge-b'],
].flatMap(([k, v]) => ['--param', `${k}=${v}`]);

/** A fresh clone's files the refine example needs (config, pipeline, examples/refine), in a temp project. */
export function exampleProject(): TempProject {
  const project = tempProject();
  for (const rel of ['refinery.config.yaml', 'pipelines/refine.yaml', 'examples/refine'])
    cpSync(path.join(REPO_ROOT, rel), project.path(rel), { recursive: true });
  return project;
}
