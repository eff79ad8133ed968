// The session's phases after the up-to-date check found something changed: plan, check what the
// tasks need, take the project, execute, record. Loaded only then: a no-op run loads none of it.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SchemaRegistry } from '../artifacts/schema-registry.ts';
import { newRunId } from '../events/bus.ts';
import { execute, type ExecuteResult } from '../executor/executor.ts';
import { preflightPlan } from '../executor/preflight.ts';
import { shardMembers, unsharded } from '../executor/shard.ts';
import { commandLookahead, startRunnersAhead } from '../executor/stage-context.ts';
import { stagesAskingToBeRedone, stagesWithFinalInputs } from '../executor/stale-check.ts';
import { removeLeftoverStaging } from '../executor/staging.ts';
import type { RemoteCacheSettings } from '../remote-cache/config.ts';
import { remoteCacheMayBeConfigured } from '../remote-cache/configured.ts';
import type { StageCache } from '../remote-cache/stage-cache.ts';
import { FileHashes } from '../state/file-hashes.ts';
import { canSkipByStat, freshStages, refineryVersion, skippedStages } from '../state/noop-recording.ts';
import type { Observations } from '../state/observations.ts';
import { acquireProjectLock } from '../state/project-lock.ts';
import type { ChangedFiles } from '../state/run-manifest.ts';
import { StageState } from '../state/stage-state.ts';
import { prepareStateFolders } from '../state/state-folders.ts';
import { writeProblem } from '../state/write-problem.ts';
import { finalInputFiles } from './final-inputs.ts';
import { onlyFlagError } from './only-check.ts';
import { recordRun } from './record-run.ts';
import { openRunBus } from './run-bus.ts';
import { fullTarget, partialTarget, type RunTarget } from './run-target.ts';
import type { RemoteRequest, RunOutcome, RunRequest } from './types.ts';

/** What the up-to-date check left for the run. */
export interface CheckedRun {
  observations: Observations;
  /** The no-op record's key, and its file. */
  key: string;
  recordFile: string;
  /** Only these files changed since the last run (undefined: check every stage). */
  changed: ChangedFiles | undefined;
}

/** The stages a run executes beyond its target's own selection: `--only`, or one share of `--shard`. */
interface Chosen {
  only: readonly string[];
  select: Set<string> | undefined;
}

/** The remote cache from the request, the environment and refinery.config.yaml; `{ error }` when misconfigured. */
async function resolveRemote(request: RunRequest): Promise<RemoteCacheSettings | undefined | { error: string }> {
  const { remote, root, env } = request;
  if (remote.off || !remoteCacheMayBeConfigured(root, env, remote.flagUrl)) return undefined;
  // The remote cache's modules (and the YAML and schema libraries they use) load only when one may be configured.
  const { resolveRemoteCache } = await import('../remote-cache/config.ts');
  const resolved = resolveRemoteCache({
    root,
    env,
    ...(remote.flagUrl !== undefined ? { flagUrl: remote.flagUrl } : {}),
    flagReadOnly: remote.readOnly,
    flagOff: remote.off,
  });
  if ('error' in resolved) return { error: resolved.error };
  for (const message of resolved.warnings) request.notify({ kind: 'remote-cache-warning', message });
  return resolved.settings;
}

/** The run's remote cache: stage results through the executor, and whatever the caller attaches (model answers). */
async function openRemote(
  settings: RemoteCacheSettings,
  runId: string,
  lookup: boolean,
  remote: RemoteRequest,
): Promise<{ stages: StageCache; close: () => void }> {
  const [{ RemoteCache }, { stageCache }] = await Promise.all([
    import('../remote-cache/remote-cache.ts'),
    import('../remote-cache/stage-cache.ts'),
  ]);
  const cache = new RemoteCache(settings, refineryVersion());
  const detach = remote.attach ? await remote.attach(cache, runId) : undefined;
  return {
    stages: stageCache(cache, { lookup }),
    close: () => {
      detach?.();
      cache.close();
    },
  };
}

function choose(request: RunRequest, target: RunTarget): Chosen {
  const { shard } = request;
  if (!shard) return { only: request.only, select: target.select };
  const left = unsharded(target.plan, shard.count);
  if (left.length > 0) request.notify({ kind: 'shard-leftover', stages: left });
  const members = shardMembers(target.plan, shard);
  // A share with nothing in it (more shards than stages) runs nothing.
  return members.length === 0 ? { only: request.only, select: new Set() } : { only: members, select: target.select };
}

/** From the changed files to the recorded run: the phases after the up-to-date check. */
export async function runChanged(request: RunRequest, checked: CheckedRun): Promise<RunOutcome> {
  const { root, warn } = request;
  const remote = await resolveRemote(request);
  if (remote && 'error' in remote) return { code: 'remote-cache-invalid', message: remote.error };
  if (request.workers && (!remote || remote.readOnly)) return { code: 'workers-need-cache', readOnly: remote?.readOnly === true };
  // The last run's plan stands only while no folder listing changed (a new foreach item needs the expansion).
  const partial =
    checked.changed && checked.changed.dirs.length === 0
      ? partialTarget(root, request.pipelineFile, checked.key, checked.changed)
      : undefined;
  const opened = partial
    ? { target: partial }
    : await fullTarget(root, request.pipelineFile, request.params, checked.observations, checked.changed, warn);
  if (!('target' in opened)) return { code: 'pipeline-invalid', ...opened };
  const { target } = opened;
  const unknown = onlyFlagError(target.plan, request.only);
  if (unknown) return { code: 'unknown-only', message: unknown };
  const chosen = choose(request, target);
  // Before anything runs (and is paid for): every backend and tool the tasks will use.
  const preflight = await preflightPlan(target.plan, {
    root,
    env: request.env,
    taskFile: (n) => target.resolver.taskFile(n),
    expandIteration: (loop, i) => target.expandIteration(loop, i),
    ...(chosen.select ? { select: chosen.select } : {}),
  });
  if (preflight.length > 0) return { code: 'preflight-failed', diagnostics: preflight };
  // A watch running this for a client holds the lock already, and runs nothing else meanwhile.
  const lock = request.services ? { ok: true as const, release: () => {} } : acquireProjectLock(root, warn);
  if (!lock.ok) return { code: 'locked', lock };
  try {
    try {
      prepareStateFolders(root, warn);
    } catch (error) {
      return { code: 'state-unwritable', writeProblems: [writeProblem(path.join(root, '.refinery'), error)] };
    }
    return await executeAndRecord(request, checked, target, chosen, remote);
  } finally {
    lock.release();
  }
}

/**
 * Whether the next run may be answered from this run's stats. A `stale_if` may ask for a rerun with
 * nothing changed on disk (a MassGen turn in progress), so a pipeline with one keeps the record
 * only when no stage's `stale_if` holds on its outputs as the run leaves them. The next run sees
 * the same answers while no recorded stat changed: a `stale_if` reads the stage's outputs (and
 * other stages'), whose stats the record holds, and params and vars, which its key holds. A stage
 * this run did not select was found up to date by the run that wrote the record it builds on.
 */
function mayKeepNoopRecord(
  root: string,
  target: RunTarget,
  looked: { select: ReadonlySet<string> | undefined; fresh: ReadonlySet<string> },
  observations: Observations,
): boolean {
  if (canSkipByStat(target.spec)) return true;
  if (target.plan.loops.length > 0) return false;
  const { plan } = target;
  const { select, fresh } = looked;
  // A stage found up to date had its stale_if answered false already, on outputs the run did not touch.
  const instances = plan.instances.filter((i) => (!select || select.has(i.id)) && !fresh.has(i.id));
  // Its exists() answers go into the record, as the run's own do.
  const exists = (rel: string): boolean => observations.probe(rel, (p) => existsSync(path.join(root, p)));
  const asking = stagesAskingToBeRedone({ root, pipeline: plan.pipeline.name, params: plan.params, vars: plan.vars, instances, exists });
  return asking.length === 0;
}

/**
 * The files the record may leave out: the inputs of the stages this run checked whose `final_if`
 * holds now, read by no other stage. A stage the run did not check keeps what the record it
 * builds on says of its files (left out already, or recorded).
 */
function finalInputsLeftOut(
  root: string,
  target: RunTarget,
  select: ReadonlySet<string> | undefined,
  observations: Observations,
): ((rel: string) => boolean) | undefined {
  const { plan } = target;
  // A plan read back in part does not show every stage that may read a file: leave nothing out.
  if (target.partial || !plan.instances.some((i) => i.spec.finalIf)) return undefined;
  const instances = plan.instances.filter((i) => i.spec.finalIf && (!select || select.has(i.id)));
  const exists = (rel: string): boolean => observations.probe(rel, (p) => existsSync(path.join(root, p)));
  const final = stagesWithFinalInputs({ root, pipeline: plan.pipeline.name, params: plan.params, vars: plan.vars, instances, exists });
  return finalInputFiles(plan.instances, new Set(final));
}

async function executeAndRecord(
  request: RunRequest,
  checked: CheckedRun,
  target: RunTarget,
  chosen: Chosen,
  remoteSettings: RemoteCacheSettings | undefined,
): Promise<RunOutcome> {
  const { root, warn, services } = request;
  const { changed } = checked;
  const runId = newRunId();
  const { bus, close } = openRunBus(request, runId, target.spec.name);
  const skipped = skippedStages(bus, changed?.skipped);
  const fresh = freshStages(bus);
  // Holding the lock, no other run is live: what killed runs left in staging can go.
  removeLeftoverStaging(root);
  // Started before the state is read, so the runners get ready meanwhile (a watch lends its own).
  // A remote cache's stages may be fetched rather than run: they keep the run's slots as they are.
  const lookahead = services?.runners || remoteSettings ? undefined : commandLookahead(target.plan, request.concurrency);
  const runnersAhead = services?.runners || request.workers ? undefined : startRunnersAhead(target.plan, root, runId, lookahead);
  const remote = remoteSettings ? await openRemote(remoteSettings, runId, !request.force, request.remote) : undefined;
  const workers =
    request.workers && remote ? await request.workers.open({ runId, stages: remote.stages, force: request.force }) : undefined;
  if (request.workers && !workers) {
    remote?.close();
    close();
    return { code: 'workers-unavailable' };
  }
  const { select, only } = chosen;
  const result: ExecuteResult = await execute(target.plan, {
    root,
    runId,
    bus,
    signal: request.signal,
    concurrency: request.concurrency,
    force: request.force,
    keepGoing: request.keepGoing,
    only,
    hashes: services?.hashes ?? new FileHashes(root, warn),
    // A run that checks only what changed reads (and checks) only the records it may ask about.
    state:
      services?.stageState(target.spec.name) ??
      new StageState(root, target.spec.name, warn, target.partial ? target.plan.instances.map((i) => i.id) : chosen.select),
    schemas: new SchemaRegistry(root),
    taskFile: (n) => target.resolver.taskFile(n),
    schemaFile: (n) => target.resolver.schemaFile(n),
    expandIteration: (loop, i) => target.expandIteration(loop, i),
    observations: checked.observations,
    ...(services?.runners ? { runners: services.runners } : {}),
    ...(runnersAhead ? { runnersAhead } : {}),
    ...(lookahead ? { commandLookahead: lookahead } : {}),
    ...(request.budgetUsd !== undefined ? { budgetUsd: request.budgetUsd } : {}),
    ...(request.stageEnv ? { stageEnv: request.stageEnv } : {}),
    ...(select
      ? { select, reportUnselected: !request.shard, eventPerUnselected: request.stageByStage, previouslySkipped: changed?.skipped }
      : {}),
    ...(target.partial ? { unlisted: target.partial.unlisted } : {}),
    ...(remote ? { stageCache: remote.stages } : {}),
    ...(workers ? { remoteSlots: workers.slots } : {}),
  }).finally(async () => {
    await workers?.close();
    remote?.close();
    // Stopped at the run's end already, unless the run ended before it began (a cycle, say).
    runnersAhead?.close();
  });
  const writeProblems = [...result.writeProblems, ...close()];
  if (
    result.status === 'succeeded' &&
    request.only.length === 0 &&
    !request.shard &&
    mayKeepNoopRecord(root, target, { select, fresh }, checked.observations)
  ) {
    const recorded = recordRun(root, {
      pipelineFile: request.pipelineFile,
      key: checked.key,
      plan: target.plan,
      stages: target.partial ? target.partial.stages : target.plan.instances.map((i) => i.id),
      observations: checked.observations,
      skipped,
      ...(select && changed ? { previous: changed.previous } : {}),
      leaveOut: finalInputsLeftOut(root, target, select, checked.observations),
      writePlan: !target.partial,
      warn,
    });
    writeProblems.push(...recorded.problems);
    // With the record and what this run looked at, the watch sorts again only those paths.
    if (recorded.record && recorded.problems.length === 0)
      services?.recordHolds(checked.recordFile, services.epoch, {
        kind: 'written',
        record: recorded.record,
        observed: checked.observations.files.keys(),
      });
  }
  return { code: 'ran', status: result.status, counts: result.counts, diagnostics: result.diagnostics, writeProblems };
}
