// The encodings a secret hides in inside a log: JSON `\u` escapes, URL (percent) encoding, a token
// wrapped across lines (each a decoded view of the whole text, mapped back to the original), and
// base64 of a line (spans decoded one by one). redact.ts looks for secrets in each and replaces,
// in the original, the range a secret came from.

export interface Span {
  start: number;
  end: number;
  decoded: string;
}

const PERCENT = /%[0-9A-Fa-f]{2}/;

/** Whether `text` may hold an encoded form at all: the cheap test before any decoding. */
export function mayBeEncoded(text: string): boolean {
  return text.includes('\\u') || PERCENT.test(text) || hasBase64Run(text);
}

/** A base64 character (A-Z a-z 0-9 + / - _): 1 small letter, 2 capital, 3 other, 0 none. */
function base64Class(c: number): number {
  if (c >= 97 && c <= 122) return 1;
  if (c >= 65 && c <= 90) return 2;
  return (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95 ? 3 : 0;
}

/**
 * Whether a run of 20+ base64 characters holds four capitals and four small letters: base64 of
 * text mixes cases throughout (`ZXhwb3J0IE9Q…`); a run id, a path, a word or a hex hash does not.
 * One pass over the characters (a regular expression for it re-scans every run at every start).
 */
function hasBase64Run(text: string): boolean {
  let length = 0;
  let upper = 0;
  let lower = 0;
  for (let i = 0; i <= text.length; i++) {
    const kind = i < text.length ? base64Class(text.charCodeAt(i)) : 0;
    if (kind === 0) {
      if (length >= 20 && upper >= 4 && lower >= 4) return true;
      length = upper = lower = 0;
      continue;
    }
    length++;
    if (kind === 1) lower++;
    else if (kind === 2) upper++;
  }
  return false;
}

function mixedCase(run: string): boolean {
  let upper = 0;
  let lower = 0;
  for (let i = 0; i < run.length; i++) {
    const kind = base64Class(run.charCodeAt(i));
    if (kind === 1) lower++;
    else if (kind === 2) upper++;
  }
  return upper >= 4 && lower >= 4;
}

/** The base64 runs of `text` worth decoding (see hasBase64Run), found in one pass. */
function base64Candidates(text: string): { index: number; run: string }[] {
  const out: { index: number; run: string }[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && base64Class(text.charCodeAt(i)) !== 0) continue;
    let end = i;
    // Padding belongs to the run it ends.
    while (end < text.length && end - i < 2 && text.charCodeAt(end) === 61) end++;
    const run = text.slice(start, end);
    if (i - start >= 20 && (i - start) % 4 !== 1 && mixedCase(run)) out.push({ index: start, run });
    start = i + 1;
  }
  return out;
}

/**
 * A decoded copy of a text, with where each of its characters came from: a secret found in the
 * view is replaced in the original over the range its characters came from.
 */
export interface View {
  text: string;
  /** The original range of view range [start, end): from the first character's source to the last's. */
  origin(start: number, end: number): { start: number; end: number };
}

function decodedView(text: string, escapes: RegExp, decode: (found: string, at: number) => string): View {
  let out = '';
  const starts: number[] = [];
  const ends: number[] = [];
  let at = 0;
  const raw = (from: number, to: number): void => {
    for (let i = from; i < to; i++) {
      starts.push(i);
      ends.push(i + 1);
    }
    out += text.slice(from, to);
  };
  escapes.lastIndex = 0;
  for (let m = escapes.exec(text); m !== null; m = escapes.exec(text)) {
    raw(at, m.index);
    const decoded = decode(m[0], m.index);
    for (let i = 0; i < decoded.length; i++) {
      starts.push(m.index);
      ends.push(m.index + m[0].length);
    }
    out += decoded;
    at = m.index + m[0].length;
  }
  raw(at, text.length);
  const startOf = Int32Array.from(starts);
  const endOf = Int32Array.from(ends);
  return { text: out, origin: (start, end) => ({ start: startOf[start] as number, end: endOf[end - 1] as number }) };
}

const JSON_ESCAPE = /\\u[0-9A-Fa-f]{4}|\\\//g;
const ASCII_PERCENT = /%[0-7][0-9A-Fa-f]/g;

/** The text with its JSON `\uXXXX` (and `\/`) escapes decoded; undefined when it has none. */
export function jsonUnescapedView(text: string): View | undefined {
  if (!text.includes('\\u')) return undefined;
  return decodedView(text, JSON_ESCAPE, (e) => (e === '\\/' ? '/' : String.fromCharCode(parseInt(e.slice(2), 16))));
}

/** The text with its ASCII `%XX` escapes decoded (keys are ASCII); undefined when it has none. */
export function percentDecodedView(text: string): View | undefined {
  if (!PERCENT.test(text)) return undefined;
  return decodedView(text, ASCII_PERCENT, (e) => String.fromCharCode(parseInt(e.slice(1), 16)));
}

/** Decoded text that is mostly printable: the run was base64 of text, not of bytes or a hash. */
function printable(decoded: string): boolean {
  let bad = 0;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd || c === 127) bad += 1;
  }
  return bad <= decoded.length / 20;
}

/** Runs that are base64 (or base64url) of text, decoded. */
export function base64Spans(text: string): Span[] {
  if (!hasBase64Run(text)) return [];
  const spans: Span[] = [];
  for (const { index, run } of base64Candidates(text)) {
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    if (decoded.length >= 8 && printable(decoded)) spans.push({ start: index, end: index + run.length, decoded });
  }
  return spans;
}

/** Characters a token is made of; a line break between two of them may cut a token in two. */
const WRAP = /(?<=[A-Za-z0-9_+/=.-])\r?\n[ \t]*(?=[A-Za-z0-9_+/=.-])/g;
const TOKEN_RUN = /^[A-Za-z0-9_+/=.-]+/;

/** A run that goes on a token: two of lower case, upper case and digits (`deploy` or `-----BEGIN` do not). */
function looksLikeTokenTail(run: string): boolean {
  return Number(/[a-z]/.test(run)) + Number(/[A-Z]/.test(run)) + Number(/[0-9]/.test(run)) >= 2;
}

/**
 * The text with every line break that cuts a token removed: a break between token characters
 * whose next line goes on with a random-looking run. Undefined when there is none.
 */
export function unwrappedView(text: string): View | undefined {
  if (!text.includes('\n')) return undefined;
  const cuts = new Set<number>();
  WRAP.lastIndex = 0;
  for (let m = WRAP.exec(text); m !== null; m = WRAP.exec(text)) {
    const after = m.index + m[0].length;
    if (looksLikeTokenTail(TOKEN_RUN.exec(text.slice(after, after + 200))?.[0] ?? '')) cuts.add(m.index);
  }
  // The view (two numbers a character) is built only for a text that has a cut token.
  return cuts.size === 0 ? undefined : decodedView(text, WRAP, (found, at) => (cuts.has(at) ? '' : found));
}
