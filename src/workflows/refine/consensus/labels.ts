/** Anonymous answer labels A, B, C... over the sorted judge names (MassGen's sorted anonymous mapping). */
export function answerLabels(judges: readonly string[]): Map<string, string> {
  const sorted = [...judges].sort();
  return new Map(sorted.map((name, i) => [name, i < 26 ? String.fromCharCode(65 + i) : `A${i}`]));
}

/** Label -> judge, accepting "B", "answer B", "Answer-B" and the like. */
export function judgeForLabel(labels: ReadonlyMap<string, string>, given: string): string | undefined {
  const cleaned = given
    .trim()
    .replace(/^(answer|evaluation|evaluator)[\s_-]*/i, '')
    .toUpperCase();
  for (const [judge, label] of labels) if (label === cleaned) return judge;
  return undefined;
}
