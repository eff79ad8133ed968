/** The bundled offline refine example's params, as `--param` flags (what `just refine` passes in refinery's clone). */
export const EXAMPLE_REFINE_PARAMS: readonly string[] = [
  ['task_file', 'examples/refine/task.md'],
  ['deliverable', 'examples/refine/deliverable/README.md,examples/refine/deliverable/slugify.mjs'],
  ['previous', 'examples/refine/previous/README.md'],
  ['writer', 'example-writer'],
  ['judges', 'example-judge-a,example-judge-b,example-judge-c'],
  ['guard', 'example-judge-b'],
].flatMap(([k, v]) => ['--param', `${k}=${v}`]);
