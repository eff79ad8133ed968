import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { openPipeline } from '../session.ts';
import { previewPlan, type PreviewEntry } from '../../engine/executor/preview.ts';
import { FileHashes } from '../../engine/state/file-hashes.ts';
import { StageState } from '../../engine/state/stage-state.ts';
import { stateWarn } from '../state-report.ts';
import type { StageInstance } from '../../engine/types/plan.ts';

const PLAN_USAGE = `Usage: refinery plan [PIPELINE] [-p KEY=VALUE]... [--force] [--json] [-v]

Shows, without running anything, which stages a run would execute and why.
  -v, --verbose   also show each stage's inputs, outputs and what it needs

Exit codes: 0 the run would start every stage it has to; 1 a stage would fail (named, with why);
2 the pipeline file or the arguments are wrong.`;

const WHY_USAGE = `Usage: refinery why PIPELINE STAGE [-p KEY=VALUE]... [--json] [-v]

Explains one stage: whether it is up to date, and what changed: an input, a param (with its old
and new value, hidden where it looks secret), the task file or command, or what an upstream it
needs wrote.
  -v, --verbose   also show the stage's inputs, outputs and what it runs`;

const MARK: Record<PreviewEntry['decision'], string> = {
  run: 'run  ',
  maybe: 'run? ',
  fresh: 'fresh',
  skip: 'skip ',
  fail: 'fail ',
  loop: 'loop ',
};

interface Previewed {
  entries: PreviewEntry[];
  json: boolean;
  verbose: boolean;
  positionals: string[];
  instances: ReadonlyMap<string, StageInstance>;
}

async function preview(argv: string[], io: CommandIo): Promise<Previewed | number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        param: { type: 'string', short: 'p', multiple: true, default: [] },
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        verbose: { type: 'boolean', short: 'v', default: false },
      },
    });
  } catch (error) {
    io.stderr.write(`refinery: ${(error as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const opened = await openPipeline(io, positionals[0], values.param);
  if (!opened) return 2;
  const entries = previewPlan(opened.expansion.plan, {
    root: io.cwd,
    hashes: new FileHashes(io.cwd, stateWarn(io)),
    state: new StageState(io.cwd, opened.spec.name, stateWarn(io)),
    force: values.force,
    taskFile: (n) => opened.resolver.taskFile(n),
    schemaFile: (n) => opened.resolver.schemaFile(n),
  });
  const instances = new Map(opened.expansion.plan.instances.map((i) => [i.id, i]));
  return { entries, json: values.json, verbose: values.verbose, positionals, instances };
}

/** For --verbose: what a stage reads, writes and runs (a loop has none of these before it runs). */
function details(inst: StageInstance | undefined): string[] {
  if (!inst) return [];
  const outputs = Object.entries(inst.outputs).map(([name, o]) => `${name} ${o.path}${o.schema ? ` (schema ${o.schema})` : ''}`);
  const runs =
    inst.spec.kind === 'task'
      ? `task ${inst.spec.task}`
      : 'shell' in inst.spec.run
        ? inst.spec.run.shell.source
        : inst.spec.run.argv.map((t) => t.source).join(' ');
  return [
    `inputs: ${inst.inputs.length ? inst.inputs.join(', ') : '(none)'}`,
    `outputs: ${outputs.length ? outputs.join(', ') : '(none)'}`,
    `runs: ${runs}`,
  ];
}

async function plan(argv: string[], io: CommandIo): Promise<number> {
  const result = await preview(argv, io);
  if (typeof result === 'number') return result;
  if (result.json) {
    io.stdout.write(`${JSON.stringify(result.entries, null, 2)}\n`);
    return result.entries.some((e) => e.decision === 'fail') ? 1 : 0;
  }
  for (const e of result.entries) {
    io.stdout.write(`${MARK[e.decision]}  ${e.id}${e.decision === 'fresh' && !result.verbose ? '' : `  (${e.reasons.join('; ')})`}\n`);
    if (!result.verbose) continue;
    if (e.needs.length) io.stdout.write(`         needs: ${e.needs.join(', ')}\n`);
    for (const line of details(result.instances.get(e.id))) io.stdout.write(`         ${line}\n`);
  }
  const toRun = result.entries.filter((e) => e.decision === 'run').length;
  const onWhen = result.entries.filter((e) => e.decision === 'maybe' && e.depends === 'when').length;
  const onOutput = result.entries.filter((e) => e.decision === 'maybe' && e.depends === 'upstream-output').length;
  const more = [
    ...(onWhen ? [`${onWhen} more if ${onWhen === 1 ? 'its' : 'their'} when holds`] : []),
    ...(onOutput ? [`${onOutput} more only if upstream output changes`] : []),
  ];
  io.stdout.write(`\n${toRun} of ${result.entries.length} stages would run${more.map((m) => `; ${m}`).join('')}.\n`);
  const failing = result.entries.filter((e) => e.decision === 'fail');
  if (failing.length === 0) return 0;
  // Said again at the end, on stderr, where a script or CI log looks for why it exited 1.
  io.stderr.write(`refinery plan: ${failing.length === 1 ? 'a stage' : `${failing.length} stages`} would fail:\n`);
  for (const e of failing) io.stderr.write(`  ${e.id}: ${e.reasons.join('; ')}\n`);
  return 1;
}

async function why(argv: string[], io: CommandIo): Promise<number> {
  const result = await preview(argv, io);
  if (typeof result === 'number') return result;
  const stage = result.positionals[1];
  const stages = `Stages: ${result.entries
    .map((e) => e.id)
    .slice(0, 20)
    .join(', ')}`;
  if (!stage) {
    io.stderr.write(`refinery why: name the stage to explain. ${stages}\n${WHY_USAGE}\n`);
    return 2;
  }
  const matches = result.entries.filter((e) => e.id === stage || e.id.startsWith(`${stage}[`));
  if (matches.length === 0) {
    io.stderr.write(`refinery why: no stage '${stage}'. ${stages}\n`);
    return 2;
  }
  if (result.json) io.stdout.write(`${JSON.stringify(matches, null, 2)}\n`);
  else {
    for (const e of matches) {
      const verdict =
        e.decision === 'fresh'
          ? 'is up to date'
          : e.decision === 'run'
            ? 'would run'
            : e.decision === 'maybe'
              ? e.depends === 'when'
                ? 'would run if its when holds'
                : 'would run only if upstream output changes'
              : e.decision === 'skip'
                ? 'would be skipped'
                : e.decision === 'loop'
                  ? 'is a loop'
                  : 'would fail';
      io.stdout.write(`${e.id} ${verdict}${e.decision === 'fresh' ? '' : ':'}\n`);
      if (e.decision !== 'fresh') for (const r of e.reasons) io.stdout.write(`  - ${r}\n`);
      if (e.needs.length) io.stdout.write(`  needs: ${e.needs.join(', ')}\n`);
      if (result.verbose) for (const line of details(result.instances.get(e.id))) io.stdout.write(`  ${line}\n`);
    }
  }
  return 0;
}

export const planCommand: Command = { name: 'plan', summary: 'Show what would run', usage: PLAN_USAGE, run: plan };
export const whyCommand: Command = { name: 'why', summary: 'Explain one stage', usage: WHY_USAGE, run: why };
