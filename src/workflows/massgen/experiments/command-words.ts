/**
 * A command line split into words as a POSIX shell would (single and double quotes, backslash
 * escapes), without running a shell: `uv run massgen` -> ['uv', 'run', 'massgen'],
 * `"/opt/my tools/massgen" --logfire` -> ['/opt/my tools/massgen', '--logfire']. Variables,
 * globs and operators are not expanded: `$HOME` stays `$HOME`. Throws on an unclosed quote.
 */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote in '${line}'`);
  if (inWord) words.push(word);
  return words;
}
