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
/** A run long enough to carry a key once base64-encoded (15 bytes and up). */
export const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}/g;
const BASE64_HINT = /[A-Za-z0-9+/_-]{20,}/;

/** Whether `text` may hold an encoded form at all: the cheap test before any decoding. */
export function mayBeEncoded(text: string): boolean {
  return text.includes('\\u') || PERCENT.test(text) || BASE64_HINT.test(text);
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

function spansOf(text: string, run: RegExp, decode: (segment: string) => string | undefined): Span[] {
  const spans: Span[] = [];
  run.lastIndex = 0;
  for (let m = run.exec(text); m !== null; m = run.exec(text)) {
    const decoded = decode(m[0]);
    if (decoded !== undefined) spans.push({ start: m.index, end: m.index + m[0].length, decoded });
  }
  return spans;
}

/** Runs that are base64 (or base64url) of text, decoded. Runs of one letter case are words, paths or hex. */
export function base64Spans(text: string): Span[] {
  if (!BASE64_HINT.test(text)) return [];
  return spansOf(text, BASE64_RUN, (segment) => {
    if (!/[a-z]/.test(segment) || !/[A-Z]/.test(segment) || segment.length % 4 === 1) return undefined;
    const decoded = Buffer.from(segment, 'base64').toString('utf8');
    return decoded.length >= 8 && printable(decoded) ? decoded : undefined;
  });
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
  let joined = false;
  const view = decodedView(text, WRAP, (found, at) => {
    const next = TOKEN_RUN.exec(text.slice(at + found.length, at + found.length + 200))?.[0] ?? '';
    if (!looksLikeTokenTail(next)) return found;
    joined = true;
    return '';
  });
  return joined ? view : undefined;
}
