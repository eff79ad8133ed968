import { z } from 'zod';

export const STAGE_ID = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const DURATION = /^\d+(\.\d+)?(ms|s|m|h)$/;

export const PIPELINE_KEYS = ['pipeline', 'description', 'params', 'vars', 'pools', 'stages'];
export const STAGE_KEYS = [
  'description',
  'task',
  'run',
  'with',
  'inputs',
  'outputs',
  'needs',
  'foreach',
  'as',
  'when',
  'pool',
  'timeout',
  'retries',
  'retry_backoff',
  'env',
  'loop',
  'stale_if',
  'final_if',
  'local',
];
export const LOOP_KEYS = ['max', 'until', 'stages'];
export const PARAM_KEYS = ['type', 'default', 'description', 'enum'];
export const OUTPUT_KEYS = ['path', 'schema'];
export const FOREACH_KEYS = ['glob', 'type', 'allow_empty'];

const stringList = z.union([z.string(), z.array(z.string())], { error: 'expected a string or a list of strings' });
const duration = z.union(
  [z.number().positive().describe('seconds'), z.string().regex(DURATION, 'expected a duration such as 500ms, 30s, 5m or 1h')],
  {
    error: 'expected a duration such as 30s, or a number of seconds',
  },
);

const outputSchema = z.union(
  [
    z.string().describe('Path relative to the project root.'),
    z.strictObject({
      path: z.string(),
      schema: z.string().describe("schemas/NAME.schema.json in the project, else refinery's.").optional(),
    }),
  ],
  {
    error: 'expected a path, or { path, schema }',
  },
);

const foreachSchema = z.union(
  [
    z.array(z.unknown()),
    z.string().describe('An expression giving a list, e.g. ${params.backends}.'),
    z.strictObject({
      glob: stringList,
      type: z.enum(['file', 'dir']).optional(),
      allow_empty: z.boolean({ error: 'expected true or false' }).optional(),
    }),
  ],
  { error: 'expected a list, an expression such as "${params.items}", or { glob, type: file|dir, allow_empty: true|false }' },
);

export interface RawStage {
  description?: string;
  task?: string;
  run?: string | string[];
  with?: Record<string, unknown>;
  inputs?: string | string[];
  outputs?: Record<string, string | { path: string; schema?: string }>;
  needs?: string | string[];
  foreach?: unknown[] | string | { glob: string | string[]; type?: 'file' | 'dir'; allow_empty?: boolean };
  as?: string;
  when?: string | boolean;
  stale_if?: string;
  final_if?: string;
  pool?: string;
  timeout?: number | string;
  local?: boolean;
  retries?: number;
  retry_backoff?: number | string;
  env?: Record<string, string | number | boolean>;
  loop?: { max: number | string; until?: string; stages: Record<string, RawStage> };
}

export const stageSchema: z.ZodType<RawStage> = z.lazy(() => stageObject);

// The descriptions are for editors: they go into schemas/pipeline.schema.json (pipelineJsonSchema).
const stageObject = z.strictObject({
  description: z.string().optional(),
  task: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a task name such as analyze-turn')
    .describe("tasks/NAME.ts in the project, else refinery's built-in task.")
    .optional(),
  run: z
    .union([z.string().min(1), z.array(z.string()).min(1)], { error: 'expected a command string or an argv list' })
    .describe('A /bin/sh command whose ${...} values are quoted, or an argv list run without word splitting.')
    .optional(),
  with: z.record(z.string(), z.unknown()).describe("Params of the task (validated by the task's zod schema).").optional(),
  inputs: stringList.describe('Files, directories or globs whose content the stage depends on.').optional(),
  outputs: z.record(z.string().regex(STAGE_ID, 'expected an output name such as report'), outputSchema).optional(),
  needs: stringList.optional(),
  foreach: foreachSchema.optional(),
  as: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a variable name')
    .describe('Name of the foreach variable (default: item).')
    .optional(),
  when: z
    .union([z.string(), z.boolean()], { error: 'expected an expression' })
    .describe('Run only when this expression is true.')
    .optional(),
  stale_if: z
    .string()
    .describe('Checked on an otherwise up-to-date stage over its own outputs (self.OUTPUT...): true runs it again.')
    .optional(),
  final_if: z
    .string()
    .describe(
      "Checked over the stage's outputs (self.OUTPUT...) after a run: true says its input files will not be rewritten, so later runs trust them by their folders' listings instead of each file's stat.",
    )
    .optional(),
  pool: z.string().optional(),
  timeout: duration.optional(),
  local: z
    .boolean({ error: 'expected true or false' })
    .describe('Run this stage on the machine that runs the pipeline, never on a `refinery worker` (refinery run --workers).')
    .optional(),
  retries: z.number().int().min(0).max(20).optional(),
  retry_backoff: duration.optional(),
  env: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'),
      z.union([z.string(), z.number(), z.boolean()]),
    )
    .optional(),
  loop: z
    .strictObject({
      max: z.union([z.number().int().min(1).max(1000), z.string()], { error: 'expected a whole number of iterations' }),
      until: z.string().describe("Checked after each iteration over that iteration's artifacts.").optional(),
      stages: z.record(z.string(), stageSchema),
    })
    .optional(),
});

export const paramSchema = z.strictObject({
  type: z.enum(['string', 'number', 'integer', 'boolean', 'list']),
  default: z.unknown().optional(),
  description: z.string().optional(),
  enum: z.array(z.unknown()).optional(),
});

export const pipelineSchema = z.strictObject({
  pipeline: z
    .string()
    .regex(STAGE_ID, 'expected a pipeline name such as analyze')
    .describe("The pipeline's name (used for its state and events)."),
  description: z.string().optional(),
  params: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a param name'), paramSchema)
    .describe('Typed parameters, overridden with --param KEY=VALUE.')
    .optional(),
  vars: z
    .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a var name such as report_dir'), z.unknown())
    .describe(
      'Named values, computed once per run after the params: templates over params, pipeline and other vars (vars.NAME). Usable in every expression.',
    )
    .optional(),
  pools: z
    .record(z.string(), z.number().int().min(1))
    .describe('Named concurrency pools, e.g. { llm: 4 }; a stage joins one with pool: NAME.')
    .optional(),
  // Each stage is checked on its own (stageSchema), so one bad stage does not hide the others.
  stages: z.record(z.string(), z.unknown()),
});

/**
 * The JSON Schema of a pipeline file (schemas/pipeline.schema.json, for editors), made from
 * the zod schemas above: `npx tsx scripts/gen-pipeline-schema.ts` (`just gen-pipeline-schema`)
 * writes it, and a test checks the committed file is current.
 */
export function pipelineJsonSchema(): Record<string, unknown> {
  const document = pipelineSchema.extend({ stages: z.record(z.string().regex(STAGE_ID), stageSchema) });
  const generated = z.toJSONSchema(document, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown> & {
    $defs: Record<string, Record<string, unknown>>;
  };
  // The one definition is the stage (a loop holds stages): named so, and with one of task, run or loop.
  const [defName, stage] = Object.entries(generated.$defs)[0] as [string, Record<string, unknown>];
  const text = JSON.stringify({
    ...generated,
    $defs: { stage: { ...stage, oneOf: [{ required: ['task'] }, { required: ['run'] }, { required: ['loop'] }] } },
  });
  const { $schema, ...body } = JSON.parse(text.replaceAll(`"#/$defs/${defName}"`, '"#/$defs/stage"')) as Record<string, unknown>;
  return {
    $schema,
    $id: 'https://refinery.dev/schemas/pipeline.schema.json',
    title: 'refinery pipeline file',
    description:
      'A DAG of stages (tasks or commands) with inputs, outputs and schemas. Strings may hold ${expr} parts: params.NAME, vars.NAME, item (foreach), outputs.NAME, inputs, artifacts.STAGE.OUTPUT, loop.iteration, loop.round.',
    ...body,
  };
}

/** The file's text: two-space JSON and a final newline. */
export function pipelineJsonSchemaText(): string {
  return `${JSON.stringify(pipelineJsonSchema(), null, 2)}\n`;
}

export type RawPipeline = Omit<z.infer<typeof pipelineSchema>, 'stages'> & { stages: Record<string, RawStage> };

export function parseDurationMs(value: number | string): number {
  if (typeof value === 'number') return value * 1000;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(value) as RegExpExecArray;
  const n = Number(m[1]);
  const unit = m[2] as 'ms' | 's' | 'm' | 'h';
  return n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
}

/** Keys allowed in the object at a JSON-pointer-like path, for did-you-mean on unknown keys. */
export function allowedKeysAt(path: ReadonlyArray<PropertyKey>): string[] {
  const p = path.map(String);
  const last = p[p.length - 1];
  if (p.length === 0) return PIPELINE_KEYS;
  if (p[p.length - 2] === 'params') return PARAM_KEYS;
  if (p[p.length - 2] === 'outputs') return OUTPUT_KEYS;
  if (last === 'foreach') return FOREACH_KEYS;
  if (last === 'loop') return LOOP_KEYS;
  return STAGE_KEYS;
}
