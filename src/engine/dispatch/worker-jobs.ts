// A worker's side of a job: find the stage in this checkout, check that it is the one the
// coordinator means (its definition, code, params, schemas and every input by content), bring in
// the files it reads by digest from the CAS, then run it through the same `runStage` as a local
// run (staging, validation, atomic publish, record) and store its result in the remote cache:
// blobs first, the action-cache entry last. Nothing in a job is code: a job that does not match
// this checkout is refused, and said why.
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Plan, StageInstance } from '../types/plan.ts';
import type { PipelineSpec } from '../types/pipeline.ts';
import type { RunEvent } from '../types/events.ts';
import type { Job } from './messages.ts';
import type { NameResolver } from '../pipeline/resolve-names.ts';
import type { RemoteCache } from '../remote-cache/remote-cache.ts';
import type { StateWarn } from '../state/set-aside.ts';
import type { FingerprintParts } from '../state/stage-state.ts';
import type { RunBudget } from '../../task/define-task.ts';
import { loadPipelineCached } from '../pipeline/cached-load.ts';
import { pipelineTextHash } from '../pipeline/load.ts';
import { readPipelineText } from '../pipeline/read-text.ts';
import { resolveParams } from '../pipeline/params.ts';
import { expandPipeline } from '../pipeline/expand.ts';
import { lazyRecord } from '../expr/evaluate.ts';
import { existsInProject, outputFolderProblem } from '../paths/inside-project.ts';
import { EventBus } from '../events/bus.ts';
import { FileHashes } from '../state/file-hashes.ts';
import { StageState } from '../state/stage-state.ts';
import { SchemaRegistry } from '../artifacts/schema-registry.ts';
import { StageContexts } from '../executor/stage-context.ts';
import { assessStage } from '../executor/assess.ts';
import { fingerprintOf, stableJson } from '../executor/fingerprint.ts';
import { runStage } from '../executor/stage-runner.ts';
import { planGraph } from '../graph/plan-graph.ts';
import { stageCache } from '../remote-cache/stage-cache.ts';
import { base64urlToHex, stageCacheKey } from '../remote-cache/keys.ts';
import { entryPathProblem } from '../remote-cache/remote-cache.ts';
import { stagingDir } from '../executor/staging.ts';
import { definitionHash, pipelineFileOf } from './stage-identity.ts';

export type JobResult =
  | { kind: 'done'; key: string; outputs: Record<string, { sha256: string; size: number }>; runMs: number; how: 'ran' | 'cached' }
  | { kind: 'failed'; code: string; reason: string; attempts: number };

/** A stage that ran and whose result is being stored: the caller decides whether its slot waits for the upload. */
export interface Storing {
  kind: 'storing';
  result: Promise<JobResult>;
}

export interface JobRunnerOptions {
  root: string;
  /** The worker's session: its staging folder and the run id its stages see. */
  sessionId: string;
  remote: RemoteCache;
  resolver: NameResolver;
  warn?: StateWarn;
  /** Aborts the stages running (a second SIGTERM): they end interrupted, their jobs go back. */
  signal: AbortSignal;
  /** Each stage's events, for the worker's log. */
  onEvent(event: RunEvent): void;
}

/** Folders a job may never write into, whatever it names: the checkout's code and refinery's state. */
const PROTECTED = /^(?:\.git|\.refinery|node_modules|tasks|pipelines|schemas)(?:\/|$)/;

interface Opened {
  plan: Plan;
  contexts: StageContexts;
  bus: EventBus;
  /** Every output path a stage of the plan writes: the only files a job may replace. */
  written: Set<string>;
  deps: ReadonlyMap<string, readonly string[]>;
}

function refused(reason: string): JobResult {
  return { kind: 'failed', code: 'worker-refused', reason, attempts: 0 };
}

/** The first part of the fingerprint that differs, in words; undefined when all match. */
export function partsDifference(mine: FingerprintParts, theirs: Job['parts']): string | undefined {
  if (mine.code !== theirs.code) return "the stage's code (its task file or command) differs from the coordinator's";
  if (mine.params !== theirs.params) return "the stage's rendered params differ from the coordinator's";
  for (const [name, h] of Object.entries(theirs.schemas))
    if (mine.schemas[name] !== h) return `schema '${name}' differs from the coordinator's`;
  for (const [file, h] of Object.entries(theirs.inputs))
    if (mine.inputs[file] !== h)
      return `input ${file} differs from the coordinator's (${mine.inputs[file] === undefined ? 'not read here' : 'other content'})`;
  for (const file of Object.keys(mine.inputs)) if (!(file in theirs.inputs)) return `input ${file} is read here but not by the coordinator`;
  if (stableJson(mine.schemas) !== stableJson(theirs.schemas)) return "the stage's schemas differ from the coordinator's";
  return undefined;
}

export class JobRunner {
  private readonly opened = new Map<string, Promise<Opened | { problem: string }>>();
  /** Every pipeline expanded, for close(). */
  private readonly expanded: Opened[] = [];
  private readonly states = new Map<string, StageState>();
  private readonly hashes: FileHashes;

  constructor(private readonly options: JobRunnerOptions) {
    this.hashes = new FileHashes(options.root, options.warn);
  }

  /** The pool the job's stage joins in this checkout (undefined when none, or the job cannot be opened). */
  async poolOf(job: Job): Promise<string | undefined> {
    const opened = await this.open(job);
    if ('problem' in opened) return undefined;
    return opened.plan.instances.find((i) => i.id === job.instance)?.spec.pool;
  }

  async run(job: Job): Promise<JobResult | Storing> {
    const opened = await this.open(job);
    if ('problem' in opened) return refused(opened.problem);
    const inst = opened.plan.instances.find((i) => i.id === job.instance);
    if (!inst || inst.stageId !== job.stage)
      return refused(`this checkout's pipeline ${job.pipeline} has no stage ${job.instance} (pull the coordinator's commit)`);
    if (definitionHash(inst) !== job.definition)
      return refused(`stage ${job.stage} is defined differently in this checkout's ${job.pipeline} (pull the coordinator's commit)`);
    if (fingerprintOf({ ...job.parts }) !== job.fingerprint) return refused('its fingerprint does not match its parts');
    const brought = await this.bringFiles(job, opened);
    if (brought) return brought;
    // What is on disk may have changed since the last job (files brought in, a pull): looked at again.
    this.hashes.invalidateAll();
    const deps = (opened.deps.get(inst.id) ?? []).map((id) => opened.plan.instances.find((i) => i.id === id)).filter(isInstance);
    const verdict = assessStage(
      inst,
      { needed: { ...job.parts.deps }, skipped: job.skipped },
      opened.contexts.artifacts.view(deps),
      undefined,
      opened.contexts.assess,
    );
    if (verdict.kind === 'skip') return refused(`its when: is false in this checkout`);
    if (verdict.kind === 'fail') return { kind: 'failed', code: verdict.code, reason: verdict.reason, attempts: 0 };
    if (verdict.kind === 'fresh') return refused('internal: a forced stage was judged up to date');
    const difference = partsDifference(verdict.parts, job.parts);
    if (difference || verdict.fingerprint !== job.fingerprint)
      return refused(`${difference ?? 'its fingerprint differs from the coordinator’s'} (pull the coordinator's commit)`);
    return this.execute(job, inst, deps, opened, verdict);
  }

  private async execute(
    job: Job,
    inst: StageInstance,
    deps: StageInstance[],
    opened: Opened,
    verdict: { fingerprint: string; parts: FingerprintParts; inputs: string[]; reasons: string[] },
  ): Promise<JobResult | Storing> {
    const started = Date.now();
    const ctx = opened.contexts.forRun(inst, () => deps, verdict.inputs, this.options.signal);
    // The coordinator looked the result up just before it sent the first attempt; a later one may
    // find what a worker that went silent stored meanwhile.
    const cache = stageCache(this.options.remote, { lookup: !job.force && job.attempt > 1 });
    let lastWarning = '';
    const stop = opened.bus.subscribe((e) => {
      if (e.type === 'stage-report' && e.stage === inst.id && e.report.kind === 'warning') lastWarning = e.report.message;
    });
    let storing = false;
    try {
      const input = {
        inst,
        fingerprint: verdict.fingerprint,
        parts: verdict.parts,
        inputs: verdict.inputs,
        reason: verdict.reasons.join('; '),
      };
      const outcome = await cache.run(input, ctx, runStage);
      const runMs = Date.now() - started;
      opened.bus.emit({
        type: 'stage-end',
        stage: inst.id,
        status: outcome.status,
        code: outcome.code,
        durationMs: runMs,
        attempts: outcome.attempts,
        ...(outcome.reason ? { reason: outcome.reason } : {}),
        ...(outcome.summary ? { summary: outcome.summary } : {}),
      });
      if (outcome.status !== 'succeeded')
        return { kind: 'failed', code: outcome.code, reason: outcome.reason ?? outcome.status, attempts: outcome.attempts };
      const how = outcome.code === 'from-remote-cache' ? 'cached' : 'ran';
      const record = ctx.state.get(inst.id);
      const outputs = Object.fromEntries(
        Object.entries(record?.outputs ?? {}).map(([name, stamp]) => [name, { sha256: base64urlToHex(stamp[3]), size: stamp[0] }]),
      );
      const done: JobResult = { kind: 'done', key: stageCacheKey(verdict.fingerprint, this.options.remote.version), outputs, runMs, how };
      if (how === 'cached') return done;
      storing = true;
      const result = (outcome.stored ?? Promise.resolve(false)).then(
        (stored): JobResult =>
          stored
            ? done
            : {
                kind: 'failed',
                code: 'worker-result-refused',
                reason: `it ran, but its result could not be stored in the remote cache${lastWarning ? `: ${lastWarning}` : ' (is it read-only?)'}`,
                attempts: outcome.attempts,
              },
      );
      void result.finally(stop);
      return { kind: 'storing', result };
    } finally {
      if (!storing) stop();
    }
  }

  /**
   * The files the job reads, as the coordinator has them: each that differs here is fetched by
   * digest (checked while it streams) and put in place atomically. Only files some stage of the
   * pipeline writes may be replaced; a source file that differs means another commit.
   */
  private async bringFiles(job: Job, opened: Opened): Promise<JobResult | undefined> {
    const { root } = this.options;
    const scratch = path.join(stagingDir(root, this.options.sessionId), 'inputs');
    mkdirSync(scratch, { recursive: true });
    for (const f of job.files) {
      const problem = entryPathProblem(f.path) ?? outputFolderProblem(root, f.path)?.message;
      if (problem) return refused(`it names the file ${f.path}: ${problem}`);
      this.hashes.forget(f.path);
      const here = this.hashes.hash(f.path);
      if (here !== undefined && base64urlToHex(here) === f.sha256) continue;
      if (PROTECTED.test(f.path) || (here !== undefined && !opened.written.has(f.path)))
        return refused(`its input ${f.path} differs from this checkout's, and no stage writes it (pull the coordinator's commit)`);
      const temp = path.join(scratch, randomBytes(8).toString('hex'));
      const got = await this.options.remote.download({ path: f.path, sha256: f.sha256, size: f.size }, temp);
      if (got.kind !== 'hit') {
        rmSync(temp, { force: true });
        const why = got.kind === 'miss' ? 'it is not in the remote cache' : got.message;
        return { kind: 'failed', code: 'missing-input', reason: `input ${f.path} could not be fetched: ${why}`, attempts: 0 };
      }
      mkdirSync(path.dirname(path.join(root, f.path)), { recursive: true });
      renameSync(temp, path.join(root, f.path));
      this.hashes.forget(f.path);
    }
    return undefined;
  }

  /**
   * The job's pipeline, loaded and expanded with its params: once while the file's text and the
   * params are the same. Jobs that arrive together share one load, so a worker handed many jobs at
   * once parses and expands its pipeline once, not once per job.
   */
  private open(job: Job): Promise<Opened | { problem: string }> {
    const found = pipelineFileOf(this.options.root, job.pipeline);
    if ('problem' in found) return Promise.resolve(found);
    const read = readPipelineText(found.file, job.pipeline);
    if ('diagnostic' in read)
      return Promise.resolve({ problem: `${job.pipeline} has errors in this checkout: ${read.diagnostic.message}` });
    const hash = pipelineTextHash(read.text);
    const key = `${found.file}\0${hash}\0${stableJson(job.params)}`;
    let opening = this.opened.get(key);
    if (!opening) {
      opening = this.load(found.file, hash, job);
      this.opened.set(key, opening);
      // A problem may be fixed in this checkout (a task file added) without the pipeline changing: not kept.
      const made = opening;
      const forget = (): void => {
        if (this.opened.get(key) === made) this.opened.delete(key);
      };
      void made.then((o) => {
        if ('problem' in o) forget();
      }, forget);
    }
    return opening;
  }

  private async load(file: string, hash: string, job: Job): Promise<Opened | { problem: string }> {
    const { root, resolver, warn } = this.options;
    const loaded = await loadPipelineCached(root, file, resolver, warn);
    if (!loaded.spec) return { problem: `${job.pipeline} has errors in this checkout: ${loaded.diagnostics[0]?.message ?? 'unknown'}` };
    if (loaded.spec.hash !== hash) return { problem: `${job.pipeline} changed in this checkout while it was read` };
    const made = this.expand(loaded.spec, job);
    if (!('problem' in made)) this.expanded.push(made);
    return made;
  }

  private expand(spec: PipelineSpec, job: Job): Opened | { problem: string } {
    const { root } = this.options;
    const { params, diagnostics } = resolveParams(spec, job.params, { exists: (rel) => existsInProject(root, rel) });
    if (diagnostics.length > 0) return { problem: `its params do not fit ${job.pipeline} here: ${diagnostics[0]?.message}` };
    const expansion = expandPipeline(spec, { root, params, artifacts: lazyRecord(() => undefined) });
    if (expansion.diagnostics.length > 0)
      return { problem: `${job.pipeline} does not expand here: ${expansion.diagnostics[0]?.message ?? 'unknown'}` };
    const plan = expansion.plan;
    const bus = new EventBus(this.options.sessionId, spec.name);
    bus.subscribe((e) => this.options.onEvent(e));
    const contexts = new StageContexts(plan, {
      root,
      runId: this.options.sessionId,
      bus,
      signal: this.options.signal,
      force: true,
      forceReason: `dispatched by run ${job.run}`,
      hashes: this.hashes,
      state: this.stateOf(spec.name),
      schemas: new SchemaRegistry(root),
      taskFile: (n) => this.options.resolver.taskFile(n),
      schemaFile: (n) => this.options.resolver.schemaFile(n),
    });
    const written = new Set(plan.instances.flatMap((i) => Object.values(i.outputs).map((o) => o.path)));
    return { plan, contexts, bus, written, deps: planGraph(plan).deps };
  }

  private stateOf(pipeline: string): StageState {
    let state = this.states.get(pipeline);
    if (!state) {
      state = new StageState(this.options.root, pipeline, this.options.warn);
      this.states.set(pipeline, state);
    }
    return state;
  }

  /** Saves the stat cache and closes the journals (the worker stops). */
  close(): void {
    this.hashes.save();
    for (const state of this.states.values()) {
      state.compact();
      state.close();
    }
    for (const o of this.expanded) o.contexts.runners?.close();
    rmSync(stagingDir(this.options.root, this.options.sessionId), { recursive: true, force: true });
  }
}

function isInstance(i: StageInstance | undefined): i is StageInstance {
  return i !== undefined;
}

export type { RunBudget };
