import { FOCUS, type Perspective } from './perspectives.ts';

/** One analyst's prompt: its perspective, the evidence rules, then the excerpt pack. */
export function analystPrompt(perspective: Perspective, question: string | null, pack: string): string {
  return [
    `You are the ${perspective} analyst of a MassGen multi-agent run (one turn). ${FOCUS[perspective]}`,
    `The question the agents answered: ${question ?? '(not recorded)'}`,
    'Answer with JSON only: {"findings": [{"severity": "high|medium|low", "claim": "...", "evidence": [...]}]}.',
    'Each finding needs evidence, and each piece of evidence is one of:',
    '- {"fact": "<JSON pointer into analysis.json, e.g. /overview/votes>", "value": "<the value you rely on, or null>"}',
    '- {"file": "<path relative to the turn folder, as shown below>", "lines": [from, to]}',
    'Evidence is checked: a pointer that does not exist, a value that differs from analysis.json, a file that is not',
    "in the turn or lines beyond a file's end make the finding unverified. Do not restate facts without a judgement;",
    'say what the facts cannot: whether it was right, wasteful, or why agents behaved so. At most 20 findings.',
    '',
    pack,
  ].join('\n');
}
