import { renderCritiquePacket, renderDegradedPacket, SUMMARY_HEADING } from './critique.ts';
import type { Evaluation } from './evaluation.ts';
import { placeholderNextTasks, type NextTasksArtifact } from './next-tasks.ts';
import { degradedVerdict, verdictArtifact, type ParsedVerdict, type VerdictArtifact } from './verdict.ts';

/** The three artifacts of one evaluation: verdict.json, critique_packet.md, next_tasks.json. */
export interface EvaluationFiles {
  verdict: VerdictArtifact;
  packet: string;
  nextTasks: NextTasksArtifact;
}

export type Judge = VerdictArtifact['judge'];

export function filesFromEvaluation(evaluation: Evaluation, judge: Judge, round?: number): EvaluationFiles {
  const word = evaluation.verdict.verdict;
  return {
    verdict: verdictArtifact(evaluation.verdict, judge, round),
    packet: renderCritiquePacket(evaluation.critique, word),
    nextTasks:
      word === 'converged'
        ? placeholderNextTasks('none', 'the verdict is converged; there is nothing left to do')
        : (evaluation.nextTasks ??
          placeholderNextTasks('degraded', evaluation.nextTasksProblem ?? 'the evaluator gave no usable next_tasks')),
  };
}

/** A free-form packet with a ```json verdict_block (MassGen's inline delimiter). */
export function filesFromSalvage(salvage: { verdict: ParsedVerdict; packet: string }, judge: Judge, round?: number): EvaluationFiles {
  const hasSummary = salvage.packet.includes(SUMMARY_HEADING);
  const packet = hasSummary
    ? `${salvage.packet}\n`
    : `${salvage.packet}\n\n${SUMMARY_HEADING}\n\n**Verdict**: ${salvage.verdict.verdict.toUpperCase()}\n`;
  return {
    verdict: verdictArtifact(salvage.verdict, judge, round),
    packet,
    nextTasks:
      salvage.verdict.verdict === 'converged'
        ? placeholderNextTasks('none', 'the verdict is converged; there is nothing left to do')
        : placeholderNextTasks('degraded', 'the evaluator gave only a verdict_block and a free-form packet; no structured next_tasks'),
  };
}

/** The spec's degraded status: default iterate verdict, the raw answer kept as the packet, the reason everywhere. */
export function degradedFiles(reason: string, rawAnswer: string | undefined, judge: Judge, round?: number): EvaluationFiles {
  return {
    verdict: degradedVerdict(reason, judge, round),
    packet: renderDegradedPacket(reason, rawAnswer),
    nextTasks: placeholderNextTasks('degraded', reason),
  };
}
