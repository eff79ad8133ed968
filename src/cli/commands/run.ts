import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import path from 'node:path';
import { findPipelineFile, parseParamFlags, readSource } from '../pipeline-file.ts';
import type { PipelineSpec } from '../../engine/types/pipeline.ts';
import type { LoopInstance, Plan, StageInstance } from '../../engine/types/plan.ts';
import type { Diagnostic } from '../../engine/types/source.ts';
import type { NameResolver } from '../../engine/pipeline/resolve-names.ts';
import { Observations, statStamp } from '../../engine/state/observations.ts';
import {
  compareWithLastRun,
  UNCHANGED_BY_STAT,
  manifestFile,
  manifestKey,
  writeManifest,
  type ChangedFiles,
  type PreviousRecord,
  type LastRunComparison,
} from '../../engine/state/run-manifest.ts';
import type { Locator } from '../../engine/pipeline/locate.ts';
import type { NoopRecord } from '../../engine/state/noop-record.ts';
import { EventBus, newRunId } from '../../engine/events/bus.ts';
import { terminalSink } from '../terminal-sink.ts';
import { jsonlSink } from '../../engine/events/jsonl-sink.ts';
import { junitSink } from '../../engine/events/junit-sink.ts';
import { prepareStateFolders } from '../../engine/state/state-folders.ts';
import type { StateWarn } from '../../engine/state/set-aside.ts';
import { writeProblem, type WriteProblem } from '../../engine/state/write-problem.ts';
import { reportLockRefusal, reportWriteProblems, stateWarn } from '../state-report.ts';
import { concurrencyFlag, parseOrReport } from '../flags.ts';
import { parseShard, shardMembers, unsharded } from '../../engine/executor/shard.ts';
import type { RemoteCacheSettings } from '../../engine/remote-cache/config.ts';
import { remoteCacheMayBeConfigured } from '../../engine/remote-cache/configured.ts';
import type { StageCache } from '../../engine/remote-cache/stage-cache.ts';
import { redactSecrets } from '../../security/known-secrets.ts';
import { canSkipByStat, refineryVersion, skippedStages } from '../../engine/state/noop-recording.ts';

const USAGE = `Usage: refinery run [PIPELINE] [options]

Runs every stage whose inputs, params, code or upstream changed since it last succeeded.

Options:
  -p, --param KEY=VALUE   set a pipeline param (repeatable)
  -j, --concurrency N     stages at once (default: number of cores)
      --only STAGE        run only STAGE and what it needs (repeatable)
      --force             rerun every selected stage
  -k, --keep-going        keep running stages that do not depend on a failure
      --json              print events as JSON lines instead of the console view
      --junit FILE        write the run as JUnit XML (a test case per stage)
  -v, --verbose           also show up-to-date stages and log lines
      --budget-usd N      start no new paid model call once N USD are spent in this run
      --remote-cache URL  share results through a Bazel HTTP cache (bazel-remote, nginx WebDAV);
                          also REFINERY_REMOTE_CACHE or remote_cache.url in refinery.config.yaml
      --remote-cache-read-only
                          look results up there but store nothing (PR builds, laptops)
      --no-remote-cache   run without the remote cache configured elsewhere
      --shard I/N         run the I-th of N shares of the expanded stages (a CI matrix)
      --workers URL       send stages to \`refinery worker\`s through this MQTT 5 broker (needs a
                          writable remote cache and REFINERY_WORKER_KEY); -j N adds local slots
      --lease S           a worker silent this long on a stage it took loses it (default 15)
      --take-timeout S    a stage no worker takes within S fails the run (default 120)

Exit codes: 0 all stages succeeded or were up to date; 1 a stage failed or an artifact was
invalid; 2 the pipeline file or the arguments are wrong (nothing ran); 130 interrupted.`;

export interface RunFlags {
  param: string[];
  concurrency?: string;
  only: string[];
  force: boolean;
  'keep-going': boolean;
  json: boolean;
  junit?: string;
  verbose: boolean;
  'budget-usd'?: string;
  'remote-cache'?: string;
  'remote-cache-read-only': boolean;
  'no-remote-cache': boolean;
  shard?: string;
  workers?: string;
  lease?: string;
  'take-timeout'?: string;
}

export function parseRunFlags(argv: string[]): { flags: RunFlags; positionals: string[] } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      param: { type: 'string', short: 'p', multiple: true, default: [] },
      concurrency: { type: 'string', short: 'j' },
      only: { type: 'string', multiple: true, default: [] },
      force: { type: 'boolean', default: false },
      'keep-going': { type: 'boolean', short: 'k', default: false },
      json: { type: 'boolean', default: false },
      junit: { type: 'string' },
      verbose: { type: 'boolean', short: 'v', default: false },
      'budget-usd': { type: 'string' },
      'remote-cache': { type: 'string' },
      'remote-cache-read-only': { type: 'boolean', default: false },
      'no-remote-cache': { type: 'boolean', default: false },
      shard: { type: 'string' },
      workers: { type: 'string' },
      lease: { type: 'string' },
      'take-timeout': { type: 'string' },
    },
  });
  return { flags: values as RunFlags, positionals };
}

function runBus(
  io: CommandIo,
  flags: RunFlags,
  runId: string,
  pipeline: string,
  warn?: StateWarn,
): { bus: EventBus; close: () => Array<WriteProblem | undefined> } {
  const bus = new EventBus(runId, pipeline);
  const jsonl = jsonlSink(io.cwd, runId, warn);
  bus.subscribe(jsonl.sink);
  for (const sink of io.daemon?.sinks ?? []) bus.subscribe(sink);
  bus.subscribe(terminalSink(io, flags));
  // A relative --junit path is from where the command was typed (a watch answering it runs elsewhere).
  const junit = flags.junit ? junitSink(path.resolve(io.workdir ?? process.cwd(), flags.junit)) : undefined;
  if (junit) bus.subscribe(junit.sink);
  return { bus, close: () => [jsonl.close(), junit?.problem()] };
}

/** Someone reads this run's events stage by stage (--json, --verbose, --junit): every stage gets its stage-end. */
function stageByStage(flags: RunFlags): boolean {
  return Boolean(flags.json || flags.verbose || flags.junit);
}

/** For --verbose: what the up-to-date check compared, and how many stats the watch spared. */
function checkLine(last: LastRunComparison): string {
  const { files, vouched } = last.checked;
  const changed = 'changed' in last ? last.changed.files.length : 0;
  const spared = vouched === 0 ? '' : ` (the watch vouched for ${vouched})`;
  return `up-to-date check: ${files} files the last run read, ${files - vouched} looked at here${spared}: ${changed} changed\n`;
}

/** Nothing the last run looked at changed: every stage is reported up to date without loading the pipeline. */
function reportNoop(
  io: CommandIo,
  flags: RunFlags,
  unchanged: { pipeline: string; stages: string[]; skipped: ReadonlyMap<string, string> },
  concurrency: number,
): number {
  const started = Date.now();
  const { bus, close } = runBus(io, flags, newRunId(), unchanged.pipeline);
  bus.emit({ type: 'run-start', stages: unchanged.stages.length, params: {}, concurrency });
  // One event per stage only where someone reads them stage by stage: a no-op of 10,000
  // stages would spend more time on events than on checking.
  if (stageByStage(flags)) {
    for (const stage of unchanged.stages) {
      const skip = unchanged.skipped.get(stage);
      bus.emit({
        type: 'stage-end',
        stage,
        status: skip === undefined ? 'fresh' : 'skipped',
        code: skip === undefined ? 'up-to-date' : 'when-false',
        durationMs: 0,
        attempts: 0,
        reason: skip ?? UNCHANGED_BY_STAT,
      });
    }
  }
  const skipped = unchanged.stages.filter((s) => unchanged.skipped.has(s)).length;
  const counts = { succeeded: 0, failed: 0, fresh: unchanged.stages.length - skipped, skipped, blocked: 0, aborted: 0 };
  bus.emit({ type: 'run-end', status: 'succeeded', durationMs: Date.now() - started, counts });
  return reportWriteProblems(io, close()) ? 1 : 0;
}

/** What a run executes: the whole expanded pipeline, or the part of the last run's plan that changed files reach. */
interface RunTarget {
  plan: Plan;
  spec: PipelineSpec;
  resolver: NameResolver;
  expandIteration(loop: LoopInstance, iteration: number): { instances: StageInstance[]; diagnostics: Diagnostic[] };
  select?: Set<string>;
  /** Read back from the last run's plan: the stages left out of `plan` (all up to date) and every stage's id. */
  partial?: { unlisted: string[]; stages: string[] };
}

// A no-op run loads none of what follows its check: the modules that load, expand, or read back
// a pipeline are imported where a run that executes stages needs them.

/** Writes the plan record and the no-op record; `record` is undefined when there was nothing to write. */
async function recordNoop(
  root: string,
  target: RunTarget,
  key: string,
  observations: Observations,
  skipped: ReadonlyMap<string, string>,
  warn: StateWarn,
  previous: PreviousRecord | undefined,
): Promise<{ problems: Array<WriteProblem | undefined>; record?: NoopRecord }> {
  // Loops expand while running: their instances are in the state, named by the loop.
  if (target.plan.loops.length > 0) return { problems: [] };
  const { writePlanRecord } = await import('./run-engine.ts');
  const stages = target.partial ? target.partial.stages : target.plan.instances.map((i) => i.id);
  // The plan record is written before the no-op record it belongs to, and only when expanded
  // afresh (a partial plan leaves the last one in place: the same key gives the same plan).
  const planProblem = target.partial ? undefined : writePlanRecord(root, key, target.plan);
  const written = writeManifest(root, target.spec.file, target.spec.name, key, stages, observations, skipped, warn, previous);
  return { problems: [planProblem, written.problem], record: written.record };
}

/** The last run's plan, cut down to what the changed files reach (no pipeline parse, no expansion); undefined to open it in full. */
async function partialTarget(root: string, pipelineFile: string, key: string, changed: ChangedFiles): Promise<RunTarget | undefined> {
  const { readPartialPlan, projectResolver, Locator, parseLocatedYaml } = await import('./run-engine.ts');
  const absolute = path.resolve(root, pipelineFile);
  let locator: Locator | undefined;
  // Read only for a message that needs a place in it (its stat has just been found unchanged).
  const locate = (at: Array<string | number>) => {
    if (!locator) {
      const text = readSource(absolute);
      locator = new Locator(absolute, text, parseLocatedYaml(absolute, text));
    }
    return locator.span(at, 'key');
  };
  const read = readPartialPlan(root, pipelineFile, key, changed.files, locate);
  if (!read) return undefined;
  const listed = new Set(read.plan.instances.map((i) => i.id));
  return {
    plan: read.plan,
    spec: read.plan.pipeline,
    resolver: projectResolver(root),
    expandIteration: () => {
      throw new Error('internal: a plan read back from the no-op record has no loops');
    },
    select: read.select,
    partial: { unlisted: changed.stages.filter((id) => !listed.has(id)), stages: changed.stages },
  };
}

/** The remote cache from the flags, the environment and refinery.config.yaml; 'error' (reported) when misconfigured. */
async function resolveRemote(io: CommandIo, flags: RunFlags): Promise<RemoteCacheSettings | undefined | 'error'> {
  if (flags['no-remote-cache'] || !remoteCacheMayBeConfigured(io.cwd, io.env, flags['remote-cache'])) return undefined;
  const { resolveRemoteCache } = await import('../../engine/remote-cache/config.ts');
  const resolved = resolveRemoteCache({
    root: io.cwd,
    env: io.env,
    ...(flags['remote-cache'] !== undefined ? { flagUrl: flags['remote-cache'] } : {}),
    flagReadOnly: flags['remote-cache-read-only'],
    flagOff: flags['no-remote-cache'],
  });
  if ('error' in resolved) {
    io.stderr.write(`refinery run: ${redactSecrets(resolved.error)}\n`);
    return 'error';
  }
  for (const w of resolved.warnings) io.stderr.write(`refinery: warning: ${redactSecrets(w)}\n`);
  return resolved.settings;
}

/** The run's remote cache: stage results through the executor, model answers through the run's tasks. */
async function openRemote(
  settings: RemoteCacheSettings,
  runId: string,
  lookup: boolean,
): Promise<{ stages: StageCache; close: () => void }> {
  const [{ RemoteCache }, { stageCache }, { remoteResponses, registerRemoteResponses }] = await Promise.all([
    import('../../engine/remote-cache/remote-cache.ts'),
    import('../../engine/remote-cache/stage-cache.ts'),
    import('../../engine/remote-cache/llm-store.ts'),
  ]);
  const cache = new RemoteCache(settings, refineryVersion());
  const unregister = registerRemoteResponses(runId, remoteResponses(cache));
  return {
    stages: stageCache(cache, { lookup }),
    close: () => {
      unregister();
      cache.close();
    },
  };
}

/** The pipeline loaded, checked and expanded in full; undefined when it has errors (printed). */
async function openTarget(
  io: CommandIo,
  arg: string | undefined,
  rawParams: readonly string[],
  observations: Observations,
  changed: ChangedFiles | undefined,
): Promise<RunTarget | undefined> {
  const [{ openPipeline }, { affectedStages }] = await Promise.all([import('../session.ts'), import('../affected.ts')]);
  const opened = await openPipeline(io, arg, rawParams, observations);
  if (!opened) return undefined;
  const select = changed ? affectedStages(opened.expansion.plan, changed.files) : undefined;
  return {
    plan: opened.expansion.plan,
    spec: opened.spec,
    resolver: opened.resolver,
    expandIteration: (loop, i) => opened.expansion.expandIteration(loop, i),
    ...(select ? { select } : {}),
  };
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const parsed = parseOrReport(io, 'run', USAGE, () => parseRunFlags(argv));
  if (!parsed) return 2;
  const { flags, positionals } = parsed;
  const jobs = concurrencyFlag(flags.concurrency);
  if ('error' in jobs) {
    io.stderr.write(`refinery run: ${jobs.error}\n`);
    return 2;
  }
  // With workers, the stages that stay here get one slot unless -j asks for more.
  const concurrency = flags.workers !== undefined && flags.concurrency === undefined ? 1 : jobs.value;
  const params = parseParamFlags(flags.param);
  const found = findPipelineFile(io.cwd, positionals[0]);
  // Made before any stat this run records is taken: see settled-stat.ts.
  const observations = new Observations();
  // The pipeline file is recorded by its stat, taken before anything reads it, like every file a
  // run reads: a no-op reads none of it, and an edit is a change that sends the run to the full check.
  const pipelineRel = found.file ? path.relative(io.cwd, found.file) : undefined;
  if (found.file && pipelineRel !== undefined) observations.file(pipelineRel, statStamp(found.file));
  const noopKey =
    found.file && !params.error ? manifestKey({ version: refineryVersion(), pipelineFile: found.file, params: params.params }) : undefined;
  const shortcut = found.file && noopKey && !flags.force && flags.only.length === 0 && flags.shard === undefined;
  const warn = stateWarn(io);
  // Under a watch daemon, what its watcher saw stands in for stat'ing what it vouches for.
  const record = found.file ? manifestFile(io.cwd, found.file) : undefined;
  const vouch = record && shortcut ? io.daemon?.vouch(record) : undefined;
  const last = found.file && noopKey && shortcut ? compareWithLastRun(io.cwd, found.file, noopKey, warn, vouch) : undefined;
  if (last && flags.verbose) io.stderr.write(checkLine(last));
  if (last && 'unchanged' in last) {
    if (record) io.daemon?.recordHolds(record, io.daemon.epoch, { kind: 'confirmed' });
    return reportNoop(io, flags, last.unchanged, concurrency);
  }
  // Some files changed, nothing else: only the stages they reach need checking (an edited
  // pipeline is not the one the last run's plan was expanded from).
  const changed =
    last && 'changed' in last && (pipelineRel === undefined || !last.changed.files.includes(pipelineRel)) ? last.changed : undefined;
  const budgetUsd = flags['budget-usd'] === undefined ? undefined : Number(flags['budget-usd']);
  if (budgetUsd !== undefined && !(budgetUsd >= 0)) {
    io.stderr.write(`refinery run: --budget-usd ${flags['budget-usd']}: expected a number of USD ≥ 0\n`);
    return 2;
  }
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  if (shard && 'error' in shard) {
    io.stderr.write(`refinery run: ${shard.error}\n`);
    return 2;
  }
  if (shard && flags.only.length > 0) {
    io.stderr.write('refinery run: --shard and --only choose stages each; give one of them\n');
    return 2;
  }
  const remoteSetup = await resolveRemote(io, flags);
  if (remoteSetup === 'error') return 2;
  const workersPlan =
    flags.workers === undefined ? undefined : (await import('./run-workers.ts')).checkWorkers(io, flags, remoteSetup, concurrency);
  if (flags.workers !== undefined && !workersPlan) return 2;
  const target =
    (changed && found.file && noopKey ? await partialTarget(io.cwd, found.file, noopKey, changed) : undefined) ??
    (await openTarget(io, positionals[0], flags.param, observations, changed));
  if (!target) return 2;
  const onlyError = flags.only.length > 0 ? (await import('../only-flag.ts')).onlyFlagError(target.plan, flags.only) : undefined;
  if (onlyError) {
    io.stderr.write(`refinery run: ${onlyError.replaceAll('\n', '\n  ')}\n`);
    return 2;
  }
  let select = target.select;
  let only = flags.only;
  if (shard) {
    const members = shardMembers(target.plan, shard);
    const left = unsharded(target.plan, shard.count);
    if (left.length > 0)
      io.stderr.write(
        `refinery run: --shard: ${left.join(', ')} ${left.length === 1 ? 'needs' : 'need'} stages of several shares; the run without --shard after the matrix runs ${left.length === 1 ? 'it' : 'them'}\n`,
      );
    // A share with nothing in it (more shards than stages) runs nothing.
    if (members.length === 0) select = new Set();
    else only = members;
  }
  // Before anything runs (and is paid for): every backend and tool the tasks will use.
  const engine = await import('./run-engine.ts');
  const { preflightPlan, acquireProjectLock } = engine;
  const preflight = await preflightPlan(target.plan, {
    root: io.cwd,
    env: io.env,
    taskFile: (n) => target.resolver.taskFile(n),
    expandIteration: (loop, i) => target.expandIteration(loop, i),
    ...(select ? { select } : {}),
  });
  if (preflight.length > 0) {
    const { printDiagnostics } = await import('../session.ts');
    printDiagnostics(io, preflight, new Map());
    return 2;
  }
  // A watch daemon running this for a client holds the lock already, and runs nothing else meanwhile.
  const lock = io.daemon ? { ok: true as const, release: () => {} } : acquireProjectLock(io.cwd, warn);
  if (!lock.ok) {
    reportLockRefusal(io, lock);
    return 1;
  }
  try {
    try {
      prepareStateFolders(io.cwd, warn);
    } catch (error) {
      reportWriteProblems(io, [writeProblem(path.join(io.cwd, '.refinery'), error)]);
      return 1;
    }
    const runId = newRunId();
    const { bus, close } = runBus(io, flags, runId, target.spec.name, warn);
    const skipped = skippedStages(bus, changed?.skipped);
    // Loaded only when something may run: the no-op path above needs none of them.
    const { execute, FileHashes, StageState, SchemaRegistry, removeLeftoverStaging, startRunnersAhead, commandLookahead } = engine;
    // Holding the lock, no other run is live: what killed runs left in staging can go.
    removeLeftoverStaging(io.cwd);
    // Started before the state is read, so the runners get ready meanwhile (a watch lends its own).
    // A remote cache's stages may be fetched rather than run: they keep the run's slots as they are.
    const lookahead = io.daemon?.runners || remoteSetup ? undefined : commandLookahead(target.plan, concurrency);
    const runnersAhead = io.daemon?.runners || workersPlan ? undefined : startRunnersAhead(target.plan, io.cwd, runId, lookahead);
    const remote = remoteSetup ? await openRemote(remoteSetup, runId, !flags.force) : undefined;
    const workers =
      workersPlan && remote
        ? await (await import('./run-workers.ts')).openWorkers(io, workersPlan, {
            runId,
            pipelineFile: target.spec.file,
            params: parseParamFlags(flags.param).params,
            stages: remote.stages,
            force: flags.force,
          })
        : undefined;
    if (workersPlan && !workers) {
      remote?.close();
      close();
      return 1;
    }
    const result = await execute(target.plan, {
      root: io.cwd,
      runId,
      bus,
      signal: io.signal,
      concurrency,
      force: flags.force,
      keepGoing: flags['keep-going'],
      only,
      hashes: io.daemon?.hashes ?? new FileHashes(io.cwd, warn),
      // A run that checks only what changed reads (and checks) only the records it may ask about.
      state:
        io.daemon?.stageState(target.spec.name) ??
        new StageState(io.cwd, target.spec.name, warn, target.partial ? target.plan.instances.map((i) => i.id) : undefined),
      schemas: new SchemaRegistry(io.cwd),
      taskFile: (n) => target.resolver.taskFile(n),
      schemaFile: (n) => target.resolver.schemaFile(n),
      expandIteration: (loop, i) => target.expandIteration(loop, i),
      observations,
      ...(io.daemon?.runners ? { runners: io.daemon.runners } : {}),
      ...(runnersAhead ? { runnersAhead } : {}),
      ...(lookahead ? { commandLookahead: lookahead } : {}),
      ...(budgetUsd !== undefined ? { budgetUsd } : {}),
      ...(select ? { select, reportUnselected: !shard, eventPerUnselected: stageByStage(flags), previouslySkipped: changed?.skipped } : {}),
      ...(target.partial ? { unlisted: target.partial.unlisted } : {}),
      ...(remote ? { stageCache: remote.stages } : {}),
      ...(workers ? { remoteSlots: workers.slots } : {}),
    }).finally(async () => {
      await workers?.close();
      remote?.close();
      // Stopped at the run's end already, unless the run ended before it began (a cycle, say).
      runnersAhead?.close();
    });
    const problems = [...result.writeProblems, ...close()];
    if (result.status === 'succeeded' && noopKey && flags.only.length === 0 && !shard && canSkipByStat(target.spec)) {
      const recorded = await recordNoop(
        io.cwd,
        target,
        noopKey,
        observations,
        skipped,
        warn,
        select && changed ? changed.previous : undefined,
      );
      problems.push(...recorded.problems);
      // With the record and what this run looked at, the daemon sorts again only those paths
      // (not all 20,000 of a large pipeline's, which held its next answer up by ~80 ms).
      if (record && recorded.record && recorded.problems.every((p) => p === undefined))
        io.daemon?.recordHolds(record, io.daemon.epoch, { kind: 'written', record: recorded.record, observed: observations.files.keys() });
    }
    for (const d of result.diagnostics) io.stderr.write(`error: ${d.message}\n`);
    const unwritten = reportWriteProblems(io, problems, result.status === 'failed');
    if (result.status === 'aborted') return 130;
    if (unwritten) return 1;
    return result.status === 'succeeded' ? 0 : result.diagnostics.length && result.counts.failed === 0 ? 2 : 1;
  } finally {
    lock.release();
  }
}

export const runCommand: Command = { name: 'run', summary: 'Run a pipeline', usage: USAGE, run };
