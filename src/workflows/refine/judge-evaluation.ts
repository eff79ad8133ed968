import type { LlmClient } from '../backends/llm-client.ts';
import { evaluationAnswerSchema } from './answer-schemas/evaluation-schema.ts';
import { degradedFiles, filesFromEvaluation, filesFromSalvage, type EvaluationFiles, type Judge } from './evaluation-files.ts';
import { evaluationReader, salvageVerdictBlock } from './evaluation.ts';
import { askWithRepair } from './judge-call.ts';

export interface JudgedFiles {
  files: EvaluationFiles;
  /** Set when the verdict is degraded or next_tasks is unusable. */
  degradedReason?: string;
  budgetExhausted: boolean;
}

/**
 * One judge evaluates: ask, parse, one repair retry, then MassGen's fallbacks (a ```json verdict_block
 * with a free-form packet, else the degraded default). Never returns an artifact that breaks its schema's rules.
 */
export async function judgeEvaluation(
  client: LlmClient,
  backend: string,
  prompt: string,
  criteriaIds: readonly string[],
  judge: Judge,
  round: number,
  signal: AbortSignal,
): Promise<JudgedFiles> {
  const result = await askWithRepair(
    client,
    backend,
    { tag: `evaluate.r${round}`, prompt, jsonSchema: evaluationAnswerSchema(criteriaIds), temperature: 0 },
    evaluationReader(criteriaIds),
    signal,
  );
  if (result.ok) {
    const files = filesFromEvaluation(result.value, judge, round);
    const reason = files.nextTasks.status === 'degraded' ? files.nextTasks.reason : undefined;
    return { files, ...(reason ? { degradedReason: reason } : {}), budgetExhausted: false };
  }
  for (const raw of [...result.rawTexts].reverse()) {
    const salvage = salvageVerdictBlock(raw, criteriaIds);
    if (salvage) {
      const files = filesFromSalvage(salvage, judge, round);
      return { files, degradedReason: files.nextTasks.status === 'degraded' ? files.nextTasks.reason : undefined, budgetExhausted: false };
    }
  }
  return {
    files: degradedFiles(result.reason, result.rawTexts.at(-1), judge, round),
    degradedReason: result.reason,
    budgetExhausted: result.budgetExhausted,
  };
}
