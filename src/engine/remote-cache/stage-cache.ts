// Stage results through the remote cache. Before a stale stage runs, its fingerprint is looked up;
// a hit is downloaded into the stage's staging paths with every digest checked, validated
// against the output schemas exactly as a local result is, published atomically and recorded
// as the stage's result, so it is never trusted more than a local one. On a miss the stage runs
// here and, where this client may write, its outputs are uploaded in the background.
import { chmodSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkStagedOutputs, discardStaged, publishOutputs, type StagedFile, type StagedOutput } from '../artifacts/commit.ts';
import { evaluateCondition, lazyRecord, type LazyRecord } from '../expr/evaluate.ts';
import type { RemoteHit } from '../types/events.ts';
import type { StageInstance } from '../types/plan.ts';
import { isFsError } from '../state/write-problem.ts';
import type { RunStageInput, StageOutcome, StageRunContext } from '../executor/stage-runner.ts';
import { stagingPaths } from '../executor/staging.ts';
import { recordPublished } from '../executor/published-outputs.ts';
import { ArtifactReader } from '../executor/artifact-reader.ts';
import { base64urlToHex, stageCacheKey } from './keys.ts';
import type { Manifest } from './manifest.ts';
import type { EntryFile, RemoteCache, RemoteCacheSummary, Warn } from './remote-cache.ts';

export type CachedOutcome = StageOutcome & {
  remote?: RemoteHit;
  /** Where the stage ran here and its result is being stored: resolves to whether it was. */
  stored?: Promise<boolean>;
};
/** Output name -> the digest a worker said it stored. */
export type ExpectedOutputs = Readonly<Record<string, { sha256: string; size: number }>>;
export type LocalRun = (input: RunStageInput, ctx: StageRunContext) => Promise<StageOutcome>;

/** What the executor calls instead of running a stage itself. */
export interface StageCache {
  run(input: RunStageInput, ctx: StageRunContext, local: LocalRun): Promise<CachedOutcome>;
  /**
   * Only the lookup: the stage's result from the remote cache, published and recorded, or
   * undefined. `countAsHit` false for a result a worker of this run just made (it saved nothing).
   * `expected`: the output digests a worker said it stored, fetched while the entry is read; used
   * only where the entry names the same.
   */
  fetch(input: RunStageInput, ctx: StageRunContext, countAsHit: boolean, expected?: ExpectedOutputs): Promise<CachedOutcome | undefined>;
  /** Where uploads go (a worker's inputs are stored there too). */
  readonly remote: RemoteCache;
  /** Waits for the uploads still under way. */
  flush(): Promise<void>;
  summary(): RemoteCacheSummary;
}

export interface StageCacheOptions {
  /** `--force`: run every stage here (and upload its result), without looking up. */
  lookup: boolean;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

function warnFor(ctx: StageRunContext, stage: string): Warn {
  return (message) => ctx.bus.emit({ type: 'stage-report', stage, report: { kind: 'warning', message } });
}

function readStagedValue(file: string, target: string): unknown {
  try {
    const text = readFileSync(file, 'utf8');
    return target.endsWith('.json') ? JSON.parse(text) : text;
  } catch {
    return undefined;
  }
}

/** Whether the stage's `stale_if` holds on these outputs: such a result asks to be redone, so it is not shared. */
function asksToBeRedone(inst: StageInstance, ctx: StageRunContext, self: LazyRecord): boolean {
  if (!inst.spec.staleIf) return false;
  const scope = ctx.scope(Object.fromEntries(Object.entries(inst.outputs).map(([k, o]) => [k, o.path])));
  try {
    return evaluateCondition(inst.spec.staleIf, { ...scope, vars: { ...scope.vars, self } });
  } catch {
    return true;
  }
}

class RemoteStageCache implements StageCache {
  private warnedLocal = false;

  constructor(
    readonly remote: RemoteCache,
    private readonly options: StageCacheOptions,
  ) {}

  fetch(input: RunStageInput, ctx: StageRunContext, countAsHit: boolean, expected?: ExpectedOutputs): Promise<CachedOutcome | undefined> {
    const key = stageCacheKey(input.fingerprint, this.remote.version);
    return this.restore(input, ctx, key, warnFor(ctx, input.inst.id), countAsHit, expected);
  }

  summary(): RemoteCacheSummary {
    return this.remote.summary();
  }

  flush(): Promise<void> {
    return this.remote.flush();
  }

  async run(input: RunStageInput, ctx: StageRunContext, local: LocalRun): Promise<CachedOutcome> {
    const { inst } = input;
    const warn = warnFor(ctx, inst.id);
    if (input.parts.local) {
      if (!this.warnedLocal) {
        this.warnedLocal = true;
        warn(`remote cache: not shared: ${input.parts.local}`);
      }
      return local(input, ctx);
    }
    const key = stageCacheKey(input.fingerprint, this.remote.version);
    // A stage redone because its last result asked for it (stale_if) would find that same result.
    const lookup = this.options.lookup && !input.reason.includes('stale_if');
    if (lookup && !ctx.signal.aborted) {
      const hit = await this.restore(input, ctx, key, warn);
      if (hit) return hit;
    }
    let costUsd = 0;
    let llmCalls = 0;
    const stop = ctx.bus.subscribe((e) => {
      if (e.type === 'stage-report' && e.stage === inst.id && e.report.kind === 'llm-call') {
        costUsd += e.report.costUsd;
        llmCalls += 1;
      }
    });
    let outcome: StageOutcome;
    try {
      outcome = await local(input, ctx);
    } finally {
      stop();
    }
    if (outcome.status === 'succeeded' && this.remote.writable) {
      const stored = this.upload(input, ctx, key, { costUsd, llmCalls }, warn);
      return { ...outcome, stored };
    }
    return outcome;
  }

  private upload(
    input: RunStageInput,
    ctx: StageRunContext,
    key: string,
    cost: { costUsd: number; llmCalls: number },
    warn: Warn,
  ): Promise<boolean> {
    const { inst } = input;
    const record = ctx.state.get(inst.id);
    if (!record || record.fingerprint !== input.fingerprint) return Promise.resolve(false);
    // Its result also rests on files it found while running, which the cache key cannot name.
    if (record.parts.reads && Object.keys(record.parts.reads).length > 0) return Promise.resolve(false);
    if (asksToBeRedone(inst, ctx, new ArtifactReader(ctx.root).own(inst))) return Promise.resolve(false);
    const files: EntryFile[] = [];
    for (const [name, o] of Object.entries(inst.outputs)) {
      const stamp = record.outputs[name];
      if (!stamp) return Promise.resolve(false);
      const file = path.join(ctx.root, o.path);
      let mode = 0;
      try {
        mode = statSync(file).mode;
      } catch {
        return Promise.resolve(false);
      }
      files.push({
        name,
        path: o.path,
        sha256: base64urlToHex(stamp[3]),
        size: stamp[0],
        isExecutable: (mode & 0o100) !== 0,
        ...(o.schema ? { schema: o.schema } : {}),
        body: { file },
      });
    }
    const meta = {
      kind: 'stage' as const,
      fingerprint: input.fingerprint,
      stage: inst.id,
      durationMs: record.durationMs,
      costUsd: cost.costUsd,
      llmCalls: cost.llmCalls,
    };
    const written = this.remote.write(key, meta, files, warn);
    this.remote.track(written);
    return written.catch(() => false);
  }

  /** The stage's result from the remote cache, published and recorded; undefined to run it here. */
  private async restore(
    input: RunStageInput,
    ctx: StageRunContext,
    key: string,
    warn: Warn,
    countAsHit = true,
    expected?: ExpectedOutputs,
  ): Promise<CachedOutcome | undefined> {
    const { inst } = input;
    const started = Date.now();
    const what = `stage ${inst.id}`;
    const prestaged = expected ? stagingPaths(ctx.root, ctx.runId, inst) : undefined;
    // The blobs a worker named come down while the entry is read: one round trip less.
    const early = prestaged?.map((o) => {
      const e = expected?.[o.name];
      return e ? { ...e, got: this.remote.download({ path: o.target.path, ...e }, o.staging) } : undefined;
    });
    const settled = async (): Promise<void> => {
      await Promise.all((early ?? []).map((e) => e?.got));
    };
    const entry = await this.remote.read(key, 'stage');
    const none = async (): Promise<undefined> => {
      await settled();
      if (prestaged) discardStaged(prestaged);
      return undefined;
    };
    if (entry.kind === 'miss') return none();
    if (entry.kind === 'failed') {
      this.remote.problem(warn, `${entry.message}; ${inst.id} runs here`);
      return none();
    }
    if (entry.kind === 'refused') {
      this.remote.refuse(warn, what, entry.reason);
      return none();
    }
    const { manifest } = entry;
    const mismatch = this.declaredMismatch(inst, input.fingerprint, manifest);
    if (mismatch) {
      this.remote.refuse(warn, what, mismatch);
      return none();
    }
    const staged = prestaged ?? stagingPaths(ctx.root, ctx.runId, inst);
    const got = await Promise.all(
      staged.map(async (o, i) => {
        const named = manifest.outputs[o.name] as Manifest['outputs'][string];
        const e = early?.[i];
        // Only a blob the entry names is used; one fetched by another digest is fetched again as named.
        if (e && e.sha256 === named.sha256 && e.size === named.size) return e.got;
        await e?.got;
        return this.remote.download(named, o.staging);
      }),
    );
    const bad = got.find((g) => g.kind !== 'hit');
    if (bad) {
      discardStaged(staged);
      // A blob pruned from the server since the entry was written is a plain miss.
      if (bad.kind === 'mismatch') this.remote.refuse(warn, what, bad.message);
      else if (bad.kind === 'failed') this.remote.problem(warn, `${bad.message}; ${inst.id} runs here`);
      return undefined;
    }
    for (const o of staged) if (entry.files.find((f) => f.path === o.target.path)?.isExecutable) chmodSync(o.staging, 0o755);
    const { issues, files } = checkStagedOutputs(staged, ctx.schemas);
    if (issues.length > 0) {
      discardStaged(staged);
      const first = issues[0] as (typeof issues)[number];
      this.remote.refuse(
        warn,
        what,
        `output '${first.output}' (${first.path}) ${first.pointer ? `at ${first.pointer} ` : ''}${first.message}`,
      );
      return undefined;
    }
    const self = lazyRecord((name) => {
      const o = staged.find((s) => s.name === name);
      return o ? readStagedValue(o.staging, o.target.path) : undefined;
    });
    if (asksToBeRedone(inst, ctx, self)) {
      discardStaged(staged);
      return undefined;
    }
    if (ctx.signal.aborted) {
      discardStaged(staged);
      return undefined;
    }
    return this.publish(input, ctx, staged, files, manifest, started, warn, countAsHit);
  }

  /** The entry must be this stage's: the same fingerprint, the same output names at the same paths. */
  private declaredMismatch(inst: StageInstance, fingerprint: string, manifest: Manifest): string | undefined {
    if (manifest.fingerprint !== fingerprint) return 'its manifest names another fingerprint';
    const declared = Object.entries(inst.outputs);
    const names = Object.keys(manifest.outputs);
    if (names.length !== declared.length || declared.some(([name, o]) => manifest.outputs[name]?.path !== o.path)) {
      return `its files (${names.map((n) => manifest.outputs[n]?.path).join(', ')}) are not the stage's declared outputs`;
    }
    return undefined;
  }

  private publish(
    input: RunStageInput,
    ctx: StageRunContext,
    staged: StagedOutput[],
    files: Map<string, StagedFile>,
    manifest: Manifest,
    started: number,
    warn: Warn,
    countAsHit: boolean,
  ): CachedOutcome | undefined {
    const { inst } = input;
    try {
      // As when a stage runs: its old record goes first, so a crash from here leaves it stale.
      ctx.state.drop(inst.id);
      const issues = publishOutputs(ctx.root, staged);
      if (issues.length > 0) {
        discardStaged(staged);
        this.remote.problem(warn, `${inst.id}: output ${issues[0]?.path} ${issues[0]?.message}; it runs here`);
        return undefined;
      }
      const outputs = recordPublished(ctx, staged, files);
      const durationMs = Date.now() - started;
      ctx.state.commit({
        stage: inst.id,
        fingerprint: input.fingerprint,
        parts: input.parts,
        outputs,
        runId: ctx.runId,
        finishedAt: new Date().toISOString(),
        durationMs,
      });
    } catch (error) {
      // A full disk: the local path meets it again and reports it as a stage failure.
      if (!isFsError(error)) throw error;
      discardStaged(staged);
      return undefined;
    }
    if (countAsHit) this.remote.served('stage', manifest);
    const cost = manifest.cost_usd > 0 ? ` and $${manifest.cost_usd.toFixed(4)}` : '';
    return {
      status: 'succeeded',
      code: 'from-remote-cache',
      attempts: 0,
      summary: `from the remote cache (saved ${seconds(manifest.duration_ms)}${cost})`,
      remote: { savedMs: manifest.duration_ms, savedUsd: manifest.cost_usd },
    };
  }
}

export function stageCache(remote: RemoteCache, options: StageCacheOptions): StageCache {
  return new RemoteStageCache(remote, options);
}
