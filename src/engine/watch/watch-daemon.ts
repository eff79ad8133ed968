import { mkdirSync, rmSync } from 'node:fs';
import { SchemaRegistry } from '../artifacts/schema-registry.ts';
import { newRunId } from '../events/bus.ts';
import { stagingDir } from '../executor/staging.ts';
import { RunnerPool, runnerPoolSupported } from '../shell/runner-pool.ts';
import type { EventBus } from '../events/bus.ts';
import type { StageInstance } from '../types/plan.ts';
import type { ExecuteResult } from '../executor/executor.ts';
import { FileHashes } from '../state/file-hashes.ts';
import type { StageState } from '../state/stage-state.ts';
import type { StateWarn } from '../state/set-aside.ts';
import { ChangeBatcher } from './change-batcher.ts';
import { ChangeLedger } from './change-ledger.ts';
import { RecordTrust } from './record-trust.ts';
import { startFsWatcher, type FsWatcher } from './fs-watcher.ts';
import type { LoadedPipeline } from '../session/open-pipeline.ts';
import { PipelineWatch, type WatchShared } from './pipeline-watch.ts';
import type { BusyPolicy, FileChange, WatchNotice } from './types.ts';

export interface WatchOptions {
  root: string;
  /** Pipelines already loaded and checked (the CLI reports those that are not). */
  pipelines: readonly LoadedPipeline[];
  /** `--param` overrides; each pipeline takes those it declares, on reload too. */
  overrides: Readonly<Record<string, string>>;
  debounceMs: number;
  /** How long after a run to run again the stages whose `stale_if` holds; 0: never. */
  recheckMs: number;
  onBusy: BusyPolicy;
  concurrency: number;
  keepGoing: boolean;
  openRun(
    runId: string,
    pipeline: string,
  ): { bus: EventBus; close(): void; stageEnv?: (inst: StageInstance) => Readonly<Record<string, string>> };
  notify(notice: WatchNotice): void;
  /** Called after every run, with its result. */
  onRunEnd?(pipeline: string, result: ExecuteResult): void;
  /** Told of damaged state files set aside. */
  warn?: StateWarn;
}

/**
 * `refinery watch` as a library: watches the inputs and files of every pipeline, debounces
 * bursts, and hands each batch to every pipeline, which runs what it affects. It brings
 * everything up to date once when started, exactly as `refinery run` would.
 */
export class WatchDaemon {
  private readonly sessions: PipelineWatch[];
  private readonly batcher: ChangeBatcher;
  private readonly fs: FsWatcher;
  private stopping: Promise<void> | undefined;
  private exclusiveTurn: Promise<void> = Promise.resolve();
  /** What the watcher saw, for answering "did this file change since then?" without a stat. */
  readonly ledger: ChangeLedger;
  /** The content-hash cache every run of this daemon shares (runs served for clients too). */
  readonly hashes: FileHashes;
  /** The no-op records this daemon can vouch for. */
  readonly trust: RecordTrust;
  /** Command runners kept warm across runs (a run on its own starts and stops its own). */
  readonly runners: RunnerPool | undefined;
  private readonly runnerScratch: string | undefined;

  private constructor(private readonly options: WatchOptions) {
    let schemas = new SchemaRegistry(options.root);
    this.hashes = new FileHashes(options.root, options.warn);
    if (runnerPoolSupported()) {
      // A folder named like a run of this process: runs clear it only once this process is gone.
      this.runnerScratch = stagingDir(options.root, newRunId());
      mkdirSync(this.runnerScratch, { recursive: true });
      this.runners = new RunnerPool(options.root, this.runnerScratch);
    }
    const shared: WatchShared = {
      root: options.root,
      hashes: this.hashes,
      schemas: () => schemas,
      resetSchemas: () => {
        schemas = new SchemaRegistry(options.root);
      },
      concurrency: options.concurrency,
      keepGoing: options.keepGoing,
      onBusy: options.onBusy,
      overrides: options.overrides,
      openRun: options.openRun,
      notify: options.notify,
      retarget: () => this.fs.setTargets(this.targets()),
      runEnded: (pipeline, result) => options.onRunEnd?.(pipeline, result),
      recheckMs: options.recheckMs,
      ...(options.warn ? { warn: options.warn } : {}),
      epoch: () => this.ledger.now,
      ...(this.runners ? { runners: this.runners } : {}),
      recordHolds: (file, epoch, update) => this.trust.recordHolds(file, epoch, update),
    };
    this.sessions = options.pipelines.map((p) => new PipelineWatch(shared, p));
    this.batcher = new ChangeBatcher(options.debounceMs, Math.max(1000, options.debounceMs * 10), (changes) => this.route(changes));
    this.ledger = new ChangeLedger((rel) => this.fs.covers(rel));
    this.trust = new RecordTrust(options.root, this.ledger);
    this.fs = startFsWatcher({
      root: options.root,
      targets: this.targets(),
      onChange: (change) => this.batcher.push(change),
      onActivity: () => this.batcher.activity(),
      onRaw: (paths) => this.ledger.saw(paths),
      onFolder: (rel, kind) => (kind === 'attached' ? this.ledger.attached(rel) : this.ledger.detached(rel)),
      onError: (error) => options.notify({ kind: 'watch-error', message: error.message }),
    });
  }

  /** Starts watching; resolves once the watcher is ready and the first runs have started. */
  static async start(options: WatchOptions): Promise<WatchDaemon> {
    const daemon = new WatchDaemon(options);
    await daemon.fs.ready;
    daemon.ledger.ready();
    for (const s of daemon.sessions) for (const p of s.outside) options.notify({ kind: 'outside-root', pipeline: s.name, path: p });
    options.notify({ kind: 'watching', pipelines: daemon.sessions.map((s) => s.name), paths: daemon.targets().size });
    for (const s of daemon.sessions) s.start();
    daemon.runners?.warm(options.concurrency);
    return daemon;
  }

  private targets(): Set<string> {
    return new Set((this.sessions ?? []).flatMap((s) => [...s.targets]));
  }

  private route(changes: FileChange[]): void {
    if (this.stopping) return;
    this.options.notify({ kind: 'changes', paths: [...new Set(changes.map((c) => c.path))].sort() });
    for (const s of this.sessions) s.offer(changes);
  }

  /** Resolves once every pipeline is idle: no run going, no change waiting. */
  async whenIdle(): Promise<void> {
    await Promise.all(this.sessions.map((s) => s.whenIdle()));
  }

  /** The stage state a watched pipeline's runs keep in memory: a run served for a client must use the same. */
  stageStateOf(pipeline: string): StageState | undefined {
    return this.sessions.find((s) => s.name === pipeline)?.stageState;
  }

  /** Names of pipelines with a run going. */
  busy(): string[] {
    return this.sessions.filter((s) => s.busy).map((s) => s.name);
  }

  /**
   * Runs `work` while no watched run goes: waits for the running ones to end, holds the
   * changes that come meanwhile, and lets the pipelines act on them afterwards. One at a time.
   */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const before = this.exclusiveTurn;
    let done!: () => void;
    this.exclusiveTurn = new Promise<void>((resolve) => {
      done = resolve;
    });
    await before;
    try {
      await Promise.all(this.sessions.map((s) => s.pause()));
      return await work();
    } finally {
      for (const s of this.sessions) s.resume();
      done();
    }
  }

  /** Stops watching and lets running stages finish; call abort() to cut them short. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.batcher.cancel();
      await this.fs.close();
      await Promise.all(this.sessions.map((s) => s.stop()));
      this.runners?.close();
      if (this.runnerScratch) rmSync(this.runnerScratch, { recursive: true, force: true });
    })();
    return this.stopping;
  }

  /** Aborts every running stage through its signal; state stays consistent (they are left stale). */
  abort(): void {
    for (const s of this.sessions) s.abort();
  }
}
