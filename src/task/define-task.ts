import type { z as zod } from 'zod';
// The type of `$` a task gets is zx's own; zx itself enters at run time in engine/shell/zx.ts.
import type { Shell } from 'zx';

/** What a task may report besides its output files; each becomes a run event. */
export type TaskReport =
  | {
      kind: 'llm-call';
      backend: string;
      model: string;
      inputTokens: number;
      outputTokens: number;
      costUsd: number;
      latencyMs: number;
      cached: boolean;
      /** Where a cached answer came from. */
      cache?: 'local' | 'remote';
      /** The provider, in the OpenTelemetry GenAI conventions' words (`openai`, `anthropic`, `ollama`, ...). */
      system?: string;
      /** What the call was for (`evaluate`, `vote`, ...). */
      tag?: string;
      /** Tries it took (0 for a cached answer). */
      attempts?: number;
      /** How the answer schema reached the model (response_format, ollama_format, cli_option, prompt, refused, none). */
      schemaVia?: string;
    }
  | {
      /** A job handed to an agent (the delegate task), once it ended. */
      kind: 'job';
      jobId: string;
      agent: string;
      type: string;
      /** How it ended: completed, error, timeout, ... */
      outcome: string;
      iterations: number;
      /** ISO 8601 time the job was registered. */
      startedAt: string;
      durationMs: number;
    }
  | { kind: 'warning'; message: string }
  | { kind: 'metric'; name: string; value: number; unit?: string };

/** The run's spending limit for paid model calls (`refinery run --budget-usd N`), shared by every stage. */
export interface RunBudget {
  /** USD allowed for the whole run; undefined when there is no limit. */
  readonly limitUsd: number | undefined;
  spentUsd(): number;
  /** False once the limit is reached: start no new paid call. */
  canSpend(): boolean;
  /** Every `report({ kind: 'llm-call', costUsd })` is charged automatically; call this only for other costs. */
  charge(usd: number): void;
}

export interface TaskContext<P> {
  /** Params after zod validation and defaults. */
  readonly params: P;
  /** Project root (absolute). Every relative path is relative to it. */
  readonly root: string;
  /** Stage id, e.g. `analyze[log_1/turn_1]`, or `task:NAME` when run alone. */
  readonly stage: string;
  readonly runId: string;
  /** Input files the stage declared, resolved (globs expanded), relative to root, sorted. */
  readonly inputs: readonly string[];
  /** Output name -> absolute staging path. Write there; the engine validates and renames into place. */
  readonly outputs: Readonly<Record<string, string>>;
  /** Output name -> final path relative to root (where the artifact will live). */
  readonly outputTargets: Readonly<Record<string, string>>;
  /**
   * Variables the engine adds for every process this stage starts (`$` has them already): the
   * stage's W3C trace context (`TRACEPARENT`) when the run exports traces. Pass them to a
   * process a task starts itself: `{ ...process.env, ...ctx.env }`.
   */
  readonly env: Readonly<Record<string, string>>;
  /** zx `$` bound to the project root (cwd) and the abort signal. */
  readonly $: Shell;
  readonly signal: AbortSignal;
  /** Directory for caches that survive runs (`.refinery/cache/<name>`), created on demand. */
  cacheDir(name: string): string;
  readonly budget: RunBudget;
  log(message: string): void;
  progress(fraction: number, message?: string): void;
  report(entry: TaskReport): void;
}

export interface TaskResult {
  /** Short human summary shown on the stage line. */
  summary?: string;
  warnings?: string[];
  /**
   * Files the task read that its stage could not declare, because it found them only while it
   * ran (a file a config names, the program a command resolves to), relative to the root or
   * absolute; paths it looked for and did not find too. Like a make depfile: the stage runs
   * again when one of them changes, appears or goes away, even though its fingerprint holds.
   */
  reads?: string[];
}

export interface TaskDefinition<S extends zod.ZodType = zod.ZodType> {
  name: string;
  description?: string;
  params: S;
  /** Output names the task writes, with the default path used when it runs alone. */
  outputs?: Record<string, { default?: string; schema?: string; description?: string }>;
  // biome-ignore lint/suspicious/noConfusingVoidType: a task whose run returns nothing is an async () => void
  run(ctx: TaskContext<zod.output<S>>): Promise<TaskResult | void>;
  /**
   * What would stop this task, found before any stage of the run starts (an unknown backend,
   * a key variable that is not set, a program that is not installed): the run does not start
   * and every problem is reported at once, so nothing is paid for a run that cannot finish.
   */
  preflight?(params: zod.output<S>, ctx: { root: string; env: NodeJS.ProcessEnv }): string[] | Promise<string[]>;
}

export function defineTask<S extends zod.ZodType>(definition: TaskDefinition<S>): TaskDefinition<S> {
  return definition;
}

/** zod, re-exported so a project's tasks need only `refinery/task`. */
export { z } from 'zod';
