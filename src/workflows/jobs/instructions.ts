import { MAX_DETAIL_CHARS } from './event-payload.ts';
import type { JobType } from './types.ts';

/** Quotes one argument for a POSIX shell, for text a person or an agent will copy. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

export interface InstructionInput {
  jobId: string;
  /** argv of the publisher without --job (e.g. node bin/refinery.js -C ROOT jobs publish --registry-dir DIR). */
  publisherArgv: string[];
  prompt: string;
  idleTimeoutSec: number;
  expectedArtifacts: string[];
  role: 'worker' | 'reviewer';
  type: JobType;
}

/** The text handed to the agent: its job id first, then the exact publish command for each event. */
export function buildInstructions(input: InstructionInput): string {
  const pub = [...input.publisherArgv, '--job', input.jobId].map(shellQuote).join(' ');
  const lines = [
    `Your job_id is "${input.jobId}" (the one just registered for THIS delegation; do NOT reuse any job_id you saw in earlier runs).`,
    '',
    `On start run: ${pub} --event started`,
    `On permission/tool prompt run: ${pub} --event permission_required --detail '<tool>:<what>'`,
    `On progress (at least every ${Math.max(1, Math.floor(input.idleTimeoutSec / 2))} s while working): ${pub} --event progress --detail '<short status>'`,
    `On success run: ${pub} --event completed --detail '<one-line summary>'`,
    `On failure run: ${pub} --event error --detail '<one-line reason>'`,
    '',
    'The subscriber for this job_id is already running; your completed/error event ends the job.',
    `Keep --detail short and general (events with a --detail over ${MAX_DETAIL_CHARS} characters are refused): no absolute paths, keys or tokens.`,
  ];
  if (input.role === 'reviewer') {
    lines.push(
      input.type === 'discuss'
        ? 'As the reviewer, always finish with --event completed: a --detail starting with AGREE if you agree with the plan, otherwise your objections.'
        : 'As the reviewer, always finish with --event completed: a --detail starting with PASS if the work is correct, otherwise the issues, each with its reason and a clear direction for improvement. Use --event error only if you could not review at all.',
    );
  }
  if (input.expectedArtifacts.length > 0) {
    lines.push('', 'Write these files before reporting completed:', ...input.expectedArtifacts.map((file) => `- ${file}`));
  }
  lines.push('', `Task: ${input.prompt}`);
  return `${lines.join('\n')}\n`;
}

/** The reviewer's prompt for a loop or discuss job (the seed's wording). */
export function reviewerPrompt(type: JobType, jobId: string, workerPrompt: string): string {
  if (type === 'discuss') {
    return `Read the draft/documents generated for job ${jobId}. Review the feasibility and content. Write your feedback/objections. If you agree with the plan, reply with 'AGREE'.\n\nThe original task was: ${workerPrompt}`;
  }
  return `Review the changes/artifacts generated for job ${jobId}. Check if they meet the requirements. If correct, report 'PASS'. If there are issues, report detailed feedback: for each issue the exact reason and a clear direction for improvement.\n\nThe original task was: ${workerPrompt}`;
}

/** The worker's prompt after a rejection (the seed's wording). */
export function reworkPrompt(jobId: string, feedback: string, originalPrompt: string): string {
  return `The reviewer provided the following feedback for job ${jobId}: ${feedback}\n\nPlease modify the code/artifacts to address these comments. Review each suggestion thoroughly and verify it; adopt it if valid, and if you judge a recommendation invalid, do not implement it but explain your reasons clearly in your completed --detail.\n\nThe original task was: ${originalPrompt}`;
}

/** A reviewer approves when its verdict starts with PASS (loop) or AGREE (discuss). */
export function isApproval(type: JobType, verdict: string): boolean {
  const word = type === 'discuss' ? 'AGREE' : 'PASS';
  return new RegExp(`^\\s*['"\`]?${word}\\b`, 'i').test(verdict);
}
