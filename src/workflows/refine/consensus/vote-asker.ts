import type { LlmClient } from '../../backends/llm-client.ts';
import type { Criterion } from '../criteria.ts';
import { filesFromEvaluation, type EvaluationFiles } from '../evaluation-files.ts';
import { askWithRepair } from '../judge-call.ts';
import { voteAnswerSchema } from '../answer-schemas/call-schemas.ts';
import { votePrompt, type LabeledAnswer } from '../prompts/vote-prompt.ts';
import { seededShuffle } from '../seeded.ts';
import { voteReader } from './vote-parse.ts';
import type { JudgeAction, JudgeSeat, RoundView } from './types.ts';

export interface VoteContext {
  client: LlmClient;
  criteria: readonly Criterion[];
  deliverable: string;
  task?: string;
  labels: ReadonlyMap<string, string>;
  /** Mixed into every judge's shuffle seed. */
  seed: string;
  /** Backend model per judge, for the judge field of new answers. */
  models: ReadonlyMap<string, string>;
  /** The refine round the new answers belong to. */
  round?: number;
}

function answerBody(files: EvaluationFiles): string {
  const scores = Object.entries(files.verdict.scores)
    .map(([id, s]) => `${id}=${s}`)
    .join(', ');
  const tasks =
    files.nextTasks.status === 'ok'
      ? `\n\nPlanned tasks:\n${files.nextTasks.tasks.map((t) => `- ${t.id}: ${t.description}`).join('\n')}`
      : '';
  return `Verdict: ${files.verdict.verdict.toUpperCase()}\nScores: ${scores}\n\n${files.packet.trim()}${tasks}`;
}

/** The `ask` of the consensus protocol: one judge votes or answers anew through its backend. */
export function voteAsker(
  context: VoteContext,
): (judge: JudgeSeat, view: RoundView<EvaluationFiles>, signal: AbortSignal) => Promise<JudgeAction<EvaluationFiles>> {
  const ids = context.criteria.map((c) => c.id);
  return async (judge, view, signal) => {
    if (!judge.backend)
      return { kind: 'none', why: 'degraded', detail: 'no backend is known for this judge (its verdict.json has no judge.backend)' };
    const shown = new Set(view.answers.map((a) => a.judge));
    const labeled: LabeledAnswer[] = view.answers.map((a) => ({ label: context.labels.get(a.judge) ?? '?', body: answerBody(a.answer) }));
    const order = seededShuffle(
      [...labeled].sort((a, b) => (a.label < b.label ? -1 : 1)),
      `${context.seed}|${judge.name}|${view.round}`,
    );
    const prompt = votePrompt({
      task: context.task,
      criteria: context.criteria,
      deliverable: context.deliverable,
      round: view.round,
      answers: order,
    });
    const result = await askWithRepair(
      context.client,
      judge.backend,
      { tag: `vote.r${view.round}`, prompt, jsonSchema: voteAnswerSchema(ids, order.map((a) => a.label).sort()), temperature: 0 },
      voteReader(context.labels, shown, ids),
      signal,
    );
    if (!result.ok) return { kind: 'none', why: result.budgetExhausted ? 'budget' : 'degraded', detail: result.reason };
    if (result.value.kind === 'vote') return { kind: 'vote', target: result.value.target, reason: result.value.reason };
    const model = context.models.get(judge.name);
    return {
      kind: 'answer',
      answer: filesFromEvaluation(result.value.evaluation, { backend: judge.backend, ...(model ? { model } : {}) }, context.round),
    };
  };
}
