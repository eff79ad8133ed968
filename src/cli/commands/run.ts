import { parseArgs } from 'node:util';
import path from 'node:path';
import type { Command, CommandIo } from '../command.ts';
import { findPipelineFile } from '../../engine/session/find-pipeline.ts';
import { runSession } from '../../engine/session/run-session.ts';
import type { RunOutcome, SessionNotice } from '../../engine/session/types.ts';
import { parseShard, type Shard } from '../../engine/executor/shard.ts';
import { terminalSink } from '../terminal-sink.ts';
import { reportLockRefusal, reportWriteProblems, stateWarn } from '../state-report.ts';
import { concurrencyFlag, parseOrReport, parseParamFlags } from '../flags.ts';
import { redactSecrets } from '../../security/known-secrets.ts';
import type { Tracing } from '../../engine/telemetry/tracing.ts';
import { startTracing } from '../tracing.ts';

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

/** Someone reads this run's events stage by stage (--json, --verbose, --junit): every stage gets its stage-end. */
function stageByStage(flags: RunFlags): boolean {
  return Boolean(flags.json || flags.verbose || flags.junit);
}

/** What the session tells before its events: printed on stderr. */
function noticeLine(notice: SessionNotice, verbose: boolean): string | undefined {
  switch (notice.kind) {
    case 'checked': {
      // For --verbose: what the up-to-date check compared, and how many stats the watch spared.
      if (!verbose) return undefined;
      const spared = notice.vouched === 0 ? '' : ` (the watch vouched for ${notice.vouched})`;
      const folders =
        notice.changedFolders === 0 ? '' : `, ${notice.changedFolders} folder listing${notice.changedFolders === 1 ? '' : 's'} changed`;
      return `up-to-date check: ${notice.files} files the last run read, ${notice.files - notice.vouched} looked at here${spared}: ${notice.changed} changed${folders}`;
    }
    case 'remote-cache-warning':
      return `refinery: warning: ${redactSecrets(notice.message)}`;
    case 'shard-leftover': {
      const one = notice.stages.length === 1;
      return `refinery run: --shard: ${notice.stages.join(', ')} ${one ? 'needs' : 'need'} stages of several shares; the run without --shard after the matrix runs ${one ? 'it' : 'them'}`;
    }
  }
}

/** The flags' values that need checking; an error message (exit 2, nothing ran) when one is wrong. */
function checkFlags(
  flags: RunFlags,
): { concurrency: number; params: Record<string, string>; budgetUsd?: number; shard?: Shard } | { error: string } {
  const jobs = concurrencyFlag(flags.concurrency);
  if ('error' in jobs) return jobs;
  const params = parseParamFlags(flags.param);
  if (params.error) return { error: params.error };
  const budgetUsd = flags['budget-usd'] === undefined ? undefined : Number(flags['budget-usd']);
  if (budgetUsd !== undefined && !(budgetUsd >= 0)) return { error: `--budget-usd ${flags['budget-usd']}: expected a number of USD ≥ 0` };
  const shard = flags.shard === undefined ? undefined : parseShard(flags.shard);
  if (shard && 'error' in shard) return shard;
  if (shard && flags.only.length > 0) return { error: '--shard and --only choose stages each; give one of them' };
  return { concurrency: jobs.value, params: params.params, ...(budgetUsd !== undefined ? { budgetUsd } : {}), ...(shard ? { shard } : {}) };
}

/** The session's outcome on the console, as an exit code: 0 all up to date or succeeded, 1 failed, 2 nothing ran (bad input), 130 interrupted. */
async function report(io: CommandIo, outcome: RunOutcome, params: Readonly<Record<string, string>>): Promise<number> {
  switch (outcome.code) {
    case 'up-to-date':
      return reportWriteProblems(io, outcome.writeProblems) ? 1 : 0;
    case 'pipeline-invalid': {
      const { printPipelineErrors } = await import('../session.ts');
      printPipelineErrors(io, outcome, params);
      return 2;
    }
    case 'remote-cache-invalid':
      io.stderr.write(`refinery run: ${redactSecrets(outcome.message)}\n`);
      return 2;
    case 'workers-need-cache':
      io.stderr.write(
        `refinery run: --workers needs a remote cache this machine may write (the workers' inputs and results travel through it): give --remote-cache URL or set REFINERY_REMOTE_CACHE${outcome.readOnly ? ', without --remote-cache-read-only' : ''}\n`,
      );
      return 2;
    case 'workers-unavailable':
      return 1;
    case 'unknown-only':
      io.stderr.write(`refinery run: ${outcome.message.replaceAll('\n', '\n  ')}\n`);
      return 2;
    case 'preflight-failed': {
      const { printDiagnostics } = await import('../session.ts');
      printDiagnostics(io, outcome.diagnostics, new Map());
      return 2;
    }
    case 'locked':
      reportLockRefusal(io, outcome.lock);
      return 1;
    case 'state-unwritable':
      reportWriteProblems(io, outcome.writeProblems);
      return 1;
    case 'ran': {
      for (const d of outcome.diagnostics) io.stderr.write(`error: ${d.message}\n`);
      const unwritten = reportWriteProblems(io, outcome.writeProblems, outcome.status === 'failed');
      if (outcome.status === 'aborted') return 130;
      if (unwritten) return 1;
      if (outcome.status === 'succeeded') return 0;
      return outcome.diagnostics.length && outcome.counts.failed === 0 ? 2 : 1;
    }
  }
}

/** The run, with its trace exported when OTEL_EXPORTER_OTLP_* or `telemetry:` says so. */
async function run(argv: string[], io: CommandIo): Promise<number> {
  const tracing = await startTracing(io, 'run');
  if (tracing === 'error') return 2;
  try {
    return await runTraced(argv, io, tracing);
  } finally {
    await tracing?.shutdown();
  }
}

async function runTraced(argv: string[], io: CommandIo, tracing: Tracing | undefined): Promise<number> {
  const parsed = parseOrReport(io, 'run', USAGE, () => parseRunFlags(argv));
  if (!parsed) return 2;
  const { flags, positionals } = parsed;
  const checked = checkFlags(flags);
  if ('error' in checked) {
    io.stderr.write(`refinery run: ${checked.error}\n`);
    return 2;
  }
  const found = findPipelineFile(io.cwd, positionals[0]);
  if (!found.file) {
    io.stderr.write(`refinery: ${found.error}\n`);
    return 2;
  }
  const trace = tracing?.forRun();
  const workersPlan =
    flags.workers === undefined ? undefined : (await import('./run-workers.ts')).checkWorkers(io, flags, checked.concurrency);
  if (flags.workers !== undefined && !workersPlan) return 2;
  const outcome = await runSession({
    root: io.cwd,
    pipelineFile: found.file,
    params: checked.params,
    env: io.env,
    // With workers, the stages that stay here get one slot unless -j asks for more.
    concurrency: flags.workers !== undefined && flags.concurrency === undefined ? 1 : checked.concurrency,
    force: flags.force,
    keepGoing: flags['keep-going'],
    only: flags.only,
    ...(checked.shard ? { shard: checked.shard } : {}),
    ...(checked.budgetUsd !== undefined ? { budgetUsd: checked.budgetUsd } : {}),
    stageByStage: stageByStage(flags),
    // A relative --junit path is from where the command was typed (a watch answering it runs elsewhere).
    ...(flags.junit ? { junitFile: path.resolve(io.workdir ?? process.cwd(), flags.junit) } : {}),
    remote: {
      ...(flags['remote-cache'] !== undefined ? { flagUrl: flags['remote-cache'] } : {}),
      readOnly: flags['remote-cache-read-only'],
      off: flags['no-remote-cache'],
      // Model answers go through the run's remote cache too, found by the run's tasks by its id.
      attach: async (cache, runId) => {
        const { remoteResponses, registerRemoteResponses } = await import('../../workflows/backends/remote-responses.ts');
        return registerRemoteResponses(runId, remoteResponses(cache));
      },
    },
    signal: io.signal,
    sinks: [...(io.daemon?.sinks ?? []), terminalSink(io, flags), ...(trace ? [trace.sink] : [])],
    warn: stateWarn(io),
    notify: (notice) => {
      const line = noticeLine(notice, flags.verbose);
      if (line !== undefined) io.stderr.write(`${line}\n`);
    },
    ...(io.daemon ? { services: io.daemon } : {}),
    ...(trace ? { stageEnv: trace.stageEnv } : {}),
    ...(workersPlan
      ? {
          workers: {
            open: async (run) =>
              (await import('./run-workers.ts')).openWorkers(io, workersPlan, {
                ...run,
                pipelineFile: found.file as string,
                params: checked.params,
              }),
          },
        }
      : {}),
  });
  return report(io, outcome, checked.params);
}

export const runCommand: Command = { name: 'run', summary: 'Run a pipeline', usage: USAGE, run };
