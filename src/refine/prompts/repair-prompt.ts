/** The one repair retry: the original request, the unusable answer and what was wrong with it. */
export function repairPrompt(originalPrompt: string, badAnswer: string, problems: readonly string[]): string {
  const shown = badAnswer.length > 20_000 ? `${badAnswer.slice(0, 20_000)}\n[... cut ...]` : badAnswer;
  return [
    originalPrompt,
    '',
    '---',
    '',
    '## Your previous answer could not be used',
    '',
    'Problems found:',
    ...problems.map((p) => `- ${p}`),
    '',
    'Previous answer:',
    '<previous_answer>',
    shown,
    '</previous_answer>',
    '',
    'Answer again with ONLY the corrected JSON object described above: no prose, no code fence.',
  ].join('\n');
}
