import { z } from 'zod';
import { defineTask } from '../src/task/define-task.ts';
import { readCriteriaParam } from '../src/workflows/refine/criteria-input.ts';
import { deliverableDigests, readDeliverable, renderDeliverable } from '../src/workflows/refine/deliverable.ts';
import { degradedFiles, type EvaluationFiles } from '../src/workflows/refine/evaluation-files.ts';
import { aggregate } from '../src/workflows/refine/consensus/aggregate.ts';
import { readJudgeInputs, type JudgeInput } from '../src/workflows/refine/consensus/judge-inputs.ts';
import { answerLabels } from '../src/workflows/refine/consensus/labels.ts';
import { runConsensus } from '../src/workflows/refine/consensus/protocol.ts';
import { aggregateReport, voteReport, type ConsensusReport } from '../src/workflows/refine/consensus/report.ts';
import { voteAsker } from '../src/workflows/refine/consensus/vote-asker.ts';
import {
  llmClientFor,
  llmParamShape,
  outputPath,
  schemaProblems,
  writeJson,
  writeText,
  writeUsageIfDeclared,
} from '../src/workflows/refine/task-support.ts';
import { nextTasksLine, taskLines } from '../src/workflows/refine/task-list.ts';
import { UsageRecorder } from '../src/workflows/refine/usage.ts';
import type { TaskContext } from '../src/task/define-task.ts';

const params = z
  .strictObject({
    /** Each judge's verdict.json, in registration order (the tie-break order); siblings critique_packet.md and next_tasks.json. */
    verdicts: z.array(z.string().min(1)).min(1).optional(),
    /** Alternative to verdicts: judge names (registration order) whose files are under judges_dir/<name>/. */
    judges: z.array(z.string().min(1)).min(1).optional(),
    judges_dir: z.string().min(1).optional(),
    /** Optional explicit packet / next_tasks paths, parallel to verdicts. */
    critiques: z.array(z.string().min(1)).optional(),
    next_tasks: z.array(z.string().min(1)).optional(),
    criteria: z.string().min(1),
    deliverable: z.array(z.string().min(1)).default([]),
    task: z.string().min(1).optional(),
    mode: z.enum(['vote', 'harshest', 'mean']).default('vote'),
    /** Rounds in total, round 1 (the evaluations) included. */
    max_rounds: z.int().min(1).max(10).default(3),
    /** Consensus is forced after this many seconds. */
    timeout_s: z.number().positive().default(600),
    /** A judge that neither votes nor answers within this is idle for the round (default: timeout_s). */
    round_timeout_s: z.number().positive().optional(),
    /** The refine round these evaluations belong to. */
    round: z.coerce.number().int().min(1).default(1),
    seed: z.string().default('refinery'),
    max_file_bytes: z.int().min(1).default(100_000),
    max_total_bytes: z.int().min(1).default(400_000),
    ...llmParamShape,
  })
  .refine((p) => p.verdicts !== undefined || (p.judges !== undefined && p.judges_dir !== undefined), {
    message: "give 'verdicts' (paths) or 'judges' with 'judges_dir'",
  });

type Params = z.output<typeof params>;

async function byVote(
  ctx: TaskContext<Params>,
  judges: JudgeInput[],
  usage: UsageRecorder,
): Promise<{ result: EvaluationFiles; report: ConsensusReport }> {
  const p = ctx.params;
  const labels = answerLabels(judges.map((j) => j.name));
  const initial = new Map(judges.filter((j) => j.files).map((j) => [j.name, j.files as EvaluationFiles]));
  const needsModel = initial.size > 0 && judges.length > 1;
  const client = needsModel ? llmClientFor(ctx, p, usage) : undefined;
  const criteria = readCriteriaParam(ctx.root, p.criteria);
  const deliverable = renderDeliverable(
    readDeliverable(ctx.root, p.deliverable, { maxFileBytes: p.max_file_bytes, maxTotalBytes: p.max_total_bytes }),
  );
  const models = new Map<string, string>();
  for (const j of judges) if (client && j.backend && client.names.includes(j.backend)) models.set(j.name, client.backend(j.backend).model);
  const seats = judges.map((j, index) => ({
    name: j.name,
    backend: j.backend && client?.names.includes(j.backend) ? j.backend : '',
    index,
  }));
  const outcome = await runConsensus<EvaluationFiles>({
    judges: seats,
    initial,
    maxRounds: p.max_rounds,
    signal: ctx.signal,
    deadline: Date.now() + p.timeout_s * 1000,
    roundTimeoutMs: (p.round_timeout_s ?? p.timeout_s) * 1000,
    budgetExhausted: () => client?.budgetExhausted ?? false,
    ask: client
      ? voteAsker({ client, criteria, deliverable, task: p.task, labels, seed: p.seed, models, round: p.round })
      : async () => ({ kind: 'none', why: 'degraded', detail: 'no backend' }),
  });
  const winner = outcome.winnerAnswer?.answer;
  const result = winner
    ? { ...winner, verdict: { ...winner.verdict, aggregate: { mode: 'vote' as const, judges: judges.map((j) => j.name) } } }
    : degradedFiles('no judge produced a usable evaluation', undefined, { backend: 'consensus:vote' }, p.round);
  return { result, report: voteReport(outcome, judges, labels, p.max_rounds, result) };
}

export default defineTask({
  name: 'consensus',
  description: "Reaches one evaluation from several judges' (step-mode votes, or harshest / mean synthesis).",
  params,
  outputs: {
    consensus: { default: 'refine/consensus.json', schema: 'consensus' },
    verdict: { default: 'refine/verdict.json', schema: 'verdict' },
    critique: { default: 'refine/critique_packet.md' },
    next_tasks: { default: 'refine/next_tasks.json', schema: 'next-tasks' },
    usage: { schema: 'llm-usage', description: 'optional: the calls made (votes) and their cost' },
  },
  async run(ctx) {
    const p = ctx.params;
    const validate = (schema: string, data: unknown) => schemaProblems(ctx.root, schema, data);
    const verdictPaths = p.verdicts ?? (p.judges ?? []).map((name) => `${p.judges_dir}/${name}/verdict.json`);
    const judges = readJudgeInputs(ctx.root, verdictPaths, validate, { critiques: p.critiques, nextTasks: p.next_tasks });
    const ids = readCriteriaParam(ctx.root, p.criteria).map((c) => c.id);
    const usage = new UsageRecorder();
    let result: EvaluationFiles;
    let report: ConsensusReport;
    if (p.mode === 'vote') ({ result, report } = await byVote(ctx, judges, usage));
    else {
      const ok = judges.filter((j) => j.files).map((j) => ({ judge: j.name, files: j.files as EvaluationFiles }));
      result = ok.length
        ? aggregate(ok, p.mode, ids)
        : degradedFiles('no judge produced a usable evaluation', undefined, { backend: `consensus:${p.mode}` }, p.round);
      report = aggregateReport(p.mode, judges, result, ids);
    }
    report.deliverable = deliverableDigests(ctx.root, p.deliverable);
    const problems = validate('consensus', report) ?? validate('verdict', result.verdict) ?? validate('next-tasks', result.nextTasks);
    if (problems) throw new Error(`consensus produced an invalid artifact (${problems}); this is a bug`);
    writeJson(outputPath(ctx, 'consensus'), report);
    writeJson(outputPath(ctx, 'verdict'), result.verdict);
    writeText(outputPath(ctx, 'critique'), result.packet);
    writeJson(outputPath(ctx, 'next_tasks'), result.nextTasks);
    writeUsageIfDeclared(ctx, usage);
    for (const j of judges.filter((j) => j.status === 'degraded'))
      ctx.report({ kind: 'warning', message: `judge ${j.name} degraded: ${j.reason}` });
    const how =
      report.mode === 'vote'
        ? `winner ${report.winner?.judge ?? 'none'}${report.forced ? ` (forced: ${report.forced_reason})` : ''}`
        : report.mode;
    const next = result.verdict.verdict === 'iterate' ? nextTasksLine(taskLines(result.nextTasks)) : '';
    return { summary: `${how}; ${result.verdict.verdict}${next ? `; ${next}` : ''}` };
  },
});
