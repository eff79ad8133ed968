import os from 'node:os';
import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { openPipeline } from '../session.ts';
import { EventBus, newRunId } from '../../events/bus.ts';
import { consoleSink } from '../../events/console-sink.ts';
import { jsonlSink } from '../../events/jsonl-sink.ts';
import { junitSink } from '../../events/junit-sink.ts';
import { execute } from '../../executor/executor.ts';
import { FileHashes } from '../../state/file-hashes.ts';
import { StageState } from '../../state/stage-state.ts';
import { acquireProjectLock } from '../../state/project-lock.ts';
import { SchemaRegistry } from '../../artifacts/schema-registry.ts';

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
    },
  });
  return { flags: values as RunFlags, positionals };
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed: ReturnType<typeof parseRunFlags>;
  try {
    parsed = parseRunFlags(argv);
  } catch (error) {
    io.stderr.write(`refinery run: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { flags, positionals } = parsed;
  const concurrency = flags.concurrency === undefined ? os.availableParallelism() : Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    io.stderr.write(`refinery run: -j ${flags.concurrency}: expected a whole number ≥ 1\n`);
    return 2;
  }
  const opened = await openPipeline(io, positionals[0], flags.param);
  if (!opened) return 2;
  const lock = acquireProjectLock(io.cwd);
  if (!lock.ok) {
    io.stderr.write(`refinery: another refinery process (pid ${lock.holder}) is running in ${io.cwd}; wait for it or stop it\n`);
    return 1;
  }
  try {
    const runId = newRunId();
    const bus = new EventBus(runId, opened.spec.name);
    const jsonl = jsonlSink(io.cwd, runId);
    bus.subscribe(jsonl.sink);
    if (flags.json) bus.subscribe((e) => io.stdout.write(`${JSON.stringify(e)}\n`));
    else {
      const live = Boolean(io.stdout.isTTY) && !io.env.CI;
      bus.subscribe(consoleSink({ out: io.stdout, live, color: live && io.env.NO_COLOR === undefined, verbose: flags.verbose, ...(io.stdout.columns ? { columns: io.stdout.columns } : {}) }));
    }
    if (flags.junit) bus.subscribe(junitSink(flags.junit));
    const result = await execute(opened.expansion.plan, {
      root: io.cwd,
      runId,
      bus,
      signal: io.signal,
      concurrency,
      force: flags.force,
      keepGoing: flags['keep-going'],
      only: flags.only,
      hashes: new FileHashes(io.cwd),
      state: new StageState(io.cwd, opened.spec.name),
      schemas: new SchemaRegistry(io.cwd),
      taskFile: (n) => opened.resolver.taskFile(n),
      schemaFile: (n) => opened.resolver.schemaFile(n),
      expandIteration: (loop, i) => opened.expansion.expandIteration(loop, i),
    });
    jsonl.close();
    for (const d of result.diagnostics) io.stderr.write(`error: ${d.message}\n`);
    if (result.status === 'aborted') return 130;
    return result.status === 'succeeded' ? 0 : result.diagnostics.length && result.counts.failed === 0 ? 2 : 1;
  } finally {
    lock.release();
  }
}

export const runCommand: Command = { name: 'run', summary: 'Run a pipeline', usage: USAGE, run };
