// A responder for the fake OpenAI server that plays judges: criteria, evaluations, votes, regression.
import type { FakeReply, RecordedRequest, Responder } from '../../../helpers/fake-openai-server.ts';
import { criteriaAnswer, evaluationAnswer, voteAnswer } from './answers.ts';

export type Kind = 'criteria' | 'evaluate' | 'vote' | 'regression' | 'unknown';

export function requestKind(prompt: string): Kind {
  if (prompt.includes('# Goal: generate')) return 'criteria';
  if (prompt.includes('# Consensus round')) return 'vote';
  if (prompt.includes('# Evaluation round')) return 'evaluate';
  if (prompt.includes('blind comparator')) return 'regression';
  return 'unknown';
}

export function isRepair(prompt: string): boolean {
  return prompt.includes('## Your previous answer could not be used');
}

export function criteriaIdsIn(prompt: string): string[] {
  return [...new Set([...prompt.matchAll(/- \*\*(E\d+)\*\* \(/g)].map((m) => m[1] as string))];
}

export function labelsShown(prompt: string): string[] {
  return [...prompt.matchAll(/<evaluation label="([A-Z]\d*)">/g)].map((m) => m[1] as string).sort();
}

export interface JudgePlan {
  /** Scores per judge (by model name); default 6. */
  scores?: (model: string) => number;
  verdict?: (model: string) => 'iterate' | 'converged';
  /** The label a judge votes for, given the labels shown. */
  voteFor?: (model: string, labels: string[]) => string;
  delayMs?: number;
}

export function judgeResponder(plan: JudgePlan = {}): Responder {
  return (req: RecordedRequest): FakeReply => {
    const model = req.body.model ?? 'm';
    const ids = criteriaIdsIn(req.prompt);
    const delayMs = plan.delayMs;
    const kind = requestKind(req.prompt);
    const content =
      kind === 'criteria'
        ? criteriaAnswer(5)
        : kind === 'evaluate'
          ? evaluationAnswer({ ids, scores: plan.scores?.(model) ?? 6, verdict: plan.verdict?.(model) ?? 'iterate', note: model })
          : kind === 'vote'
            ? voteAnswer(
                plan.voteFor?.(model, labelsShown(req.prompt)) ?? labelsShown(req.prompt)[0] ?? 'A',
                `${model} finds it most precise`,
              )
            : kind === 'regression'
              ? JSON.stringify({
                  summary: 'B is stronger overall',
                  dimensions: ids.map((criterion, i) => ({
                    criterion,
                    answer_a_score: 5,
                    answer_b_score: i === 0 ? 5 : 7,
                    stronger: i === 0 ? 'equivalent' : 'B',
                    difference: 'marginal',
                    evidence: `evidence for ${criterion}`,
                  })),
                })
              : 'I do not understand the request.';
    return { kind: 'content', content, ...(delayMs ? { delayMs } : {}) };
  };
}
