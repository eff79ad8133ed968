/**
 * Lines of the form `,"<key>":<JSON value>` in a text, found without parsing the others: a
 * state file read for a few of its tens of thousands of entries (file stamps, the plan record's
 * index) is searched for them, and indexed once lookups are many. A key's line must follow a
 * newline (JSON.stringify never writes one inside a string, so `\n,"<key>":` starts a line
 * and nothing else); a key written twice is found at its last line (a file appended to).
 */
export class KeyedLines {
  private index: Map<string, number> | undefined;
  private searches = 0;

  constructor(
    readonly text: string,
    /** Lookups by searching the text before an index of every line is worth its cost. */
    private readonly searchesBeforeIndex = 12,
  ) {}

  /** Where the key's line starts (at its comma), or -1. */
  lineOf(key: string): number {
    if (!this.index && this.searches < this.searchesBeforeIndex) {
      this.searches += 1;
      const at = this.text.lastIndexOf(`\n,${JSON.stringify(key)}:`);
      return at < 0 ? -1 : at + 1;
    }
    this.index ??= this.indexLines();
    return this.index.get(key) ?? -1;
  }

  /** The key's value, unparsed (up to the end of its line), or undefined. */
  value(key: string): string | undefined {
    const start = this.lineOf(key);
    if (start < 0) return undefined;
    return this.text.slice(stringEnd(this.text, start + 1) + 2, lineEnd(this.text, start));
  }

  /** Where the line starting at `start` ends (its newline, or the end of the text). */
  lineEnd(start: number): number {
    return lineEnd(this.text, start);
  }

  /** Every key with where its (last) line starts. */
  lines(): ReadonlyMap<string, number> {
    this.index ??= this.indexLines();
    return this.index;
  }

  private indexLines(): Map<string, number> {
    const index = new Map<string, number>();
    const text = this.text;
    for (let start = text.indexOf('\n') + 1; start > 0 && start < text.length; start = lineEnd(text, start) + 1) {
      if (!text.startsWith(',"', start)) continue;
      const close = stringEnd(text, start + 1);
      if (close < 0 || text.charCodeAt(close + 1) !== 58 /* : */) continue;
      const key = text.slice(start + 2, close);
      let name = key;
      if (key.includes('\\')) {
        try {
          name = JSON.parse(`"${key}"`) as string;
        } catch {
          continue;
        }
      }
      index.set(name, start);
    }
    return index;
  }
}

function lineEnd(text: string, start: number): number {
  const end = text.indexOf('\n', start);
  return end < 0 ? text.length : end;
}

/** The index of the closing quote of the JSON string whose opening quote is at `at`, or -1. */
function stringEnd(text: string, at: number): number {
  for (let q = text.indexOf('"', at + 1); q > 0; q = text.indexOf('"', q + 1)) {
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === 92 /* backslash */) slashes += 1;
    if (slashes % 2 === 0) return q;
  }
  return -1;
}
