/**
 * The one repair retry: the original request, the unusable answer, ajv's errors against the call's
 * schema (quoted as ajv gives them) and the other problems found.
 */
export function repairPrompt(
  originalPrompt: string,
  badAnswer: string,
  problems: readonly string[],
  schemaErrors: readonly string[] = [],
): string {
  const shown = badAnswer.length > 20_000 ? `${badAnswer.slice(0, 20_000)}\n[... cut ...]` : badAnswer;
  return [
    originalPrompt,
    '',
    '---',
    '',
    '## Your previous answer could not be used',
    '',
    ...(schemaErrors.length > 0 ? ['Schema errors (ajv, JSON pointer and message):', ...schemaErrors.map((e) => `- ${e}`), ''] : []),
    ...(problems.length > 0 ? ['Problems found:', ...problems.map((p) => `- ${p}`), ''] : []),
    'Previous answer:',
    '<previous_answer>',
    shown,
    '</previous_answer>',
    '',
    'Answer again with ONLY the corrected JSON object described above: no prose, no code fence.',
  ].join('\n');
}
