/**
 * Lines of the form `,"<key>":<JSON value>` in a text, found without parsing the others: a
 * state file read for a few of its tens of thousands of entries (file stamps) is searched for
 * them, and indexed once lookups are many. A key's line must follow a newline (JSON.stringify
 * never writes one inside a string, so `\n,"<key>":` starts a line and nothing else); a key
 * written twice is found at its last line (a file appended to).
 *
 * A file written whole may hold its lines sorted by key (`sorted`: where they start and end),
 * the lines appended since after them: a lookup then looks among the appended lines first (the
 * last line of a key stands), then halves the sorted ones, ~15 lines read for 20,000, where a
 * search reads half the text (~0.5 ms for 2 MB) and an index all of it (~6 ms). The order is
 * that of the keys as written (JSON strings, quotes included, code unit by code unit): what is
 * not in that order is not found, which costs a stamp a hash, never a wrong answer.
 */
export interface SortedLines {
  /** Where the first sorted line starts. */
  start: number;
  /** Where the lines after the sorted ones start (the end of the last sorted line's newline). */
  end: number;
}

export interface KeyedLinesOptions {
  /** Lookups by searching the text before an index of every line is worth its cost. */
  searchesBeforeIndex?: number;
  sorted?: SortedLines;
}

export class KeyedLines {
  private index: Map<string, number> | undefined;
  /** The lines after the sorted ones, indexed at the first lookup. */
  private appended: Map<string, number> | undefined;
  private searches = 0;
  private readonly searchesBeforeIndex: number;
  private readonly sorted: SortedLines | undefined;

  constructor(
    readonly text: string,
    options: KeyedLinesOptions = {},
  ) {
    this.searchesBeforeIndex = options.searchesBeforeIndex ?? 12;
    this.sorted = options.sorted && isSortedRegion(text, options.sorted) ? options.sorted : undefined;
  }

  /** Where the key's line starts (at its comma), or -1. */
  lineOf(key: string): number {
    if (this.index) return this.index.get(key) ?? -1;
    if (this.sorted) {
      this.appended ??= this.indexLines(this.sorted.end);
      return this.appended.get(key) ?? this.searchSorted(JSON.stringify(key), this.sorted);
    }
    if (this.searches < this.searchesBeforeIndex) {
      this.searches += 1;
      const at = this.text.lastIndexOf(`\n,${JSON.stringify(key)}:`);
      return at < 0 ? -1 : at + 1;
    }
    this.index = this.indexLines(this.text.indexOf('\n') + 1);
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

  /** The key of the line starting at `start` as written (a JSON string, quotes included), or undefined. */
  writtenKey(start: number): string | undefined {
    const close = stringEnd(this.text, start + 1);
    return close < 0 ? undefined : this.text.slice(start + 1, close + 1);
  }

  /** Every key with where its (last) line starts. */
  lines(): ReadonlyMap<string, number> {
    this.index ??= this.indexLines(this.text.indexOf('\n') + 1);
    return this.index;
  }

  /** The lines from `from` on (the first line, a header, is never one), by key: the last line of each. */
  private indexLines(from: number): Map<string, number> {
    const index = new Map<string, number>();
    const text = this.text;
    for (let start = from; start > 0 && start < text.length; start = lineEnd(text, start) + 1) {
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

  /** The sorted line whose written key is `written`, halving the region; -1 when there is none. */
  private searchSorted(written: string, { start, end }: SortedLines): number {
    const text = this.text;
    let low = start;
    let high = end;
    while (low < high) {
      const mid = (low + high) >>> 1;
      // The line holding `mid` (low starts a line, so it starts at low or later).
      const line = text.lastIndexOf('\n', mid - 1) + 1;
      const order = compareWrittenKey(text, line, written);
      if (Number.isNaN(order)) return -1;
      if (order === 0) return text.charCodeAt(line + written.length + 1) === 58 /* : */ ? line : -1;
      if (order < 0) low = lineEnd(text, line) + 1;
      else high = line;
    }
    return -1;
  }
}

/** The written keys of sorted lines compare this way (JSON strings, code unit by code unit). */
export function compareWritten(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A region that starts and ends at a line's start within the text. */
function isSortedRegion(text: string, { start, end }: SortedLines): boolean {
  if (!(start > 0 && start <= end && end <= text.length)) return false;
  return text.charCodeAt(start - 1) === 10 && (end === start || text.charCodeAt(end - 1) === 10);
}

/** The line's written key against `written` (negative: the line's sorts first); NaN for a line not in the form. */
function compareWrittenKey(text: string, line: number, written: string): number {
  if (text.charCodeAt(line) !== 44 /* , */) return Number.NaN;
  const open = line + 1;
  const close = stringEnd(text, open);
  if (close < 0 || text.charCodeAt(open) !== 34 /* " */) return Number.NaN;
  const length = close - open + 1;
  const common = Math.min(length, written.length);
  for (let i = 0; i < common; i += 1) {
    const difference = text.charCodeAt(open + i) - written.charCodeAt(i);
    if (difference !== 0) return difference;
  }
  return length - written.length;
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
