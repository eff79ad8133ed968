// A stage's record in the journal: its own module, so the journal's line reader and the state
// that keeps the journal both read it without importing each other.
import type { FileStamp } from './file-hashes.ts';

/** What a fingerprint was made of, kept so `refinery why` can say what changed. */
export interface FingerprintParts {
  /** Hash of the task source or the command. */
  code: string;
  /** Hash of resolved params (`with:` or the rendered command). */
  params: string;
  /** Input path -> content hash. */
  inputs: Record<string, string>;
  /**
   * Each stage it `needs:` -> a hash of what that stage wrote (its outputs' contents), or
   * 'skipped'. A stage it depends on only by reading its outputs as inputs is not here: those
   * files are in `inputs`, by content. (A record of an earlier refinery holds every upstream's
   * fingerprint here.)
   */
  deps: Record<string, string>;
  /** Resolved params one by one, so `refinery why` can name the one that changed (param-values.ts); not hashed. */
  values?: Record<string, string>;
  /** Schema name -> hash of the schema file. */
  schemas: Record<string, string>;
  /**
   * Path -> content hash ('missing' when it was not there) of the files the task said it read
   * beyond its inputs (TaskResult.reads), as they were after its run; not hashed: what a stage
   * depends on before it runs is its fingerprint, these are checked beside it.
   */
  reads?: Record<string, string>;
  /** Set when the result is not shared through a remote cache, and why (its params name the project folder by absolute path). */
  local?: string;
}

export interface StageRecord {
  stage: string;
  fingerprint: string;
  parts: FingerprintParts;
  outputs: Record<string, FileStamp>;
  runId: string;
  finishedAt: string;
  durationMs: number;
}
