// What the coordinator and its workers say to each other, as data checked on arrival. A job names
// a stage and the content hashes that identify it; it carries no code and no secret, and a worker
// runs only what its own checkout holds. Results carry digests, never paths on either machine or
// file contents: the files travel through the remote cache.
import { z } from 'zod';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const hash = z.string().min(1).max(200);
/** A stage or instance id: instance ids hold foreach keys, which may be any text but control characters. */
const id = z.string().regex(/^[^\u0000-\u001f]{1,1000}$/);
/** A run id as newRunId makes it, or any such token: it becomes a topic level. */
export const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;
const runId = z.string().regex(RUN_ID);
const workerName = z.string().regex(/^[A-Za-z0-9_.-]{1,80}$/);

export const WORKER_NAME = /^[A-Za-z0-9_.-]{1,80}$/;

const fileDigest = z.strictObject({ path: z.string().min(1).max(4096), sha256: hex64, size: z.int().min(0) });

/** The parts of a fingerprint the job was made with (FingerprintParts without `values` or `local`). */
const parts = z.strictObject({
  code: hash,
  params: hash,
  inputs: z.record(z.string(), hash),
  deps: z.record(z.string(), hash),
  schemas: z.record(z.string(), hash),
});

export const jobSchema = z.strictObject({
  kind: z.literal('job'),
  project: z.string().min(1).max(200),
  run: runId,
  /** Unique within the run: the stage instance's id. */
  job: id,
  attempt: z.int().min(1),
  /** The pipeline, as `pipelines/NAME.yaml` relative to the project or `builtin:NAME`. */
  pipeline: z.string().min(1).max(1000),
  /** The run's `--param` values, as typed. */
  params: z.record(z.string(), z.string()),
  stage: id,
  instance: id,
  /** Content hashes: the stage's definition in the pipeline, and its fingerprint with the parts it is made of. */
  definition: hash,
  fingerprint: hash,
  parts,
  /** Dependencies that were skipped (their `when` was false). */
  skipped: z.array(id),
  /** Every file the stage reads (its inputs, and the outputs of the stages it depends on), by digest. */
  files: z.array(fileDigest),
  /** How long a worker's silence on a job it took counts as alive; it says it holds the job at a third of it. */
  leaseMs: z.int().min(100).max(3_600_000),
  /** `--force`: run it even where the remote cache holds its result. */
  force: z.boolean(),
});

/** How many more jobs a worker takes now (its free slots, and one to wait for the next), and the order it said it in (`seq` rises with each word). */
const freeSlots = { free: z.int().min(0).max(100_000), seq: z.int().min(0) };

export const takenSchema = z.strictObject({ kind: z.literal('taken'), run: runId, job: id, attempt: z.int().min(1), ...freeSlots });
export const beatSchema = z.strictObject({ kind: z.literal('beat'), run: runId, jobs: z.array(id).max(10_000) });
export const backSchema = z.strictObject({ kind: z.literal('back'), run: runId, job: id, attempt: z.int().min(1) });
export const doneSchema = z.strictObject({
  kind: z.literal('done'),
  run: runId,
  job: id,
  attempt: z.int().min(1),
  fingerprint: hash,
  /** The action-cache key the result is stored under. */
  key: hex64,
  outputs: z.record(z.string(), z.strictObject({ sha256: hex64, size: z.int().min(0) })),
  /** Waiting in the worker for a slot, and running the stage (command or task, validation, upload). */
  queuedMs: z.number().min(0),
  runMs: z.number().min(0),
  /** How long the slot it went into had stood free when the job came (0 when it waited for one). */
  idleMs: z.number().min(0),
  /** How the worker got the result: it ran the stage, or found it in the remote cache. */
  how: z.enum(['ran', 'cached']),
});
export const failedSchema = z.strictObject({
  kind: z.literal('failed'),
  run: runId,
  job: id,
  attempt: z.int().min(1),
  /** The stage's outcome code, or `worker-refused` when the job does not match the worker's checkout. */
  code: z.string().regex(/^[a-z-]{1,60}$/),
  reason: z.string().max(4000),
  attempts: z.int().min(0),
});

/**
 * A worker's free slots, on the project's slots topic: when it starts, when a slot frees, when a
 * coordinator calls, and every ANNOUNCE_MS. A coordinator sends only as many jobs as `free` says.
 */
export const slotsSchema = z.strictObject({ kind: z.literal('slots'), slots: z.int().min(0).max(100_000), ...freeSlots });
/** A coordinator that starts (or reconnects) asks every worker of the project for its free slots. */
export const callSchema = z.strictObject({ kind: z.literal('call'), run: runId });

export type Job = z.output<typeof jobSchema>;
export type Slots = z.output<typeof slotsSchema>;
export type Call = z.output<typeof callSchema>;
export type Taken = z.output<typeof takenSchema>;
export type Beat = z.output<typeof beatSchema>;
export type Back = z.output<typeof backSchema>;
export type Done = z.output<typeof doneSchema>;
export type Failed = z.output<typeof failedSchema>;
export type Reply = Taken | Beat | Back | Done | Failed;

const replySchema = z.discriminatedUnion('kind', [takenSchema, beatSchema, backSchema, doneSchema, failedSchema]);

function problemOf(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`;
}

export function parseJob(body: unknown): { job: Job } | { problem: string } {
  const parsed = jobSchema.safeParse(body);
  return parsed.success ? { job: parsed.data } : { problem: `not a job (${problemOf(parsed.error)})` };
}

export function parseSlots(body: unknown): { slots: Slots } | { problem: string } {
  const parsed = slotsSchema.safeParse(body);
  return parsed.success ? { slots: parsed.data } : { problem: `not a worker's free slots (${problemOf(parsed.error)})` };
}

export function parseCall(body: unknown): { call: Call } | { problem: string } {
  const parsed = callSchema.safeParse(body);
  return parsed.success ? { call: parsed.data } : { problem: `not a coordinator's call (${problemOf(parsed.error)})` };
}

export function parseReply(body: unknown): { reply: Reply } | { problem: string } {
  const parsed = replySchema.safeParse(body);
  return parsed.success ? { reply: parsed.data } : { problem: `not a worker reply (${problemOf(parsed.error)})` };
}

export { workerName };
