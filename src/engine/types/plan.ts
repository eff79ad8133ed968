import type { LoopSpec, PipelineSpec, StageSpec } from './pipeline.ts';

export interface ResolvedOutput {
  /** Final path, relative to the root. */
  path: string;
  schema?: string;
}

/** One runnable stage: a pipeline stage, or one item of a foreach, or one loop iteration of it. */
export interface StageInstance {
  id: string;
  stageId: string;
  spec: StageSpec;
  /** Loop variables and the foreach item, by name. */
  vars: Record<string, unknown>;
  /** Input paths and globs, relative to the root. */
  inputs: string[];
  outputs: Record<string, ResolvedOutput>;
  /** Instance ids this one needs (explicit, and from artifacts referenced). */
  needs: string[];
  /**
   * Of `needs`, those it has for order only: a loop iteration's stages wait for the loop's needs
   * (iteration 1) or the previous iteration's stages, and list what they read of them as inputs.
   * What those stages wrote does not enter its fingerprint (only its inputs' content does).
   */
  ordered?: string[];
  loop?: { id: string; iteration: number };
}

export interface LoopInstance {
  id: string;
  spec: LoopSpec;
  max: number;
  /** Instance ids that must finish before iteration 1. */
  needs: string[];
}

export interface Plan {
  pipeline: PipelineSpec;
  root: string;
  params: Record<string, unknown>;
  /** The pipeline's `vars:`, computed from the params when the plan was made. */
  vars: Record<string, unknown>;
  instances: StageInstance[];
  loops: LoopInstance[];
}
