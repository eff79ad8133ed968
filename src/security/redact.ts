// Pure redaction of secrets and personal details in text: the one place that knows what a secret
// looks like. Callers choose the kinds; the result says how many of each were replaced, so an
// exporter can report what it removed without ever holding the removed text. The shapes are a
// table (secret-shapes.ts); the encodings they hide in are found by encoded-text.ts.
import { base64Spans, jsonUnescapedView, mayBeEncoded, percentDecodedView, unwrappedView, type View } from './encoded-text.ts';
import { ASSIGNMENT_HINT, isSecretFieldValue, SHAPE_HINT, SHAPE_RULES, type ShapeKind, type ShapeRule } from './secret-shapes.ts';

export type RedactionKind =
  /** An exact value the caller knows is secret (a key variable's value), or one line of it. */
  | 'secret_value'
  | ShapeKind
  | 'email'
  /** A home folder (`/home/NAME`, `/Users/NAME`, `C:\Users\NAME`, or one given), replaced by `~`. */
  | 'home_path';

/** Credentials: what every log line, event and artifact is cleaned of. */
export const KEY_KINDS: readonly RedactionKind[] = [
  'secret_value',
  'private_key',
  'bearer_token',
  'jwt',
  'sk_key',
  'aws_access_key',
  'github_token',
  'google_api_key',
  'slack_token',
  'secret_assignment',
];
/** Credentials and personal details: for text that leaves the machine (bundles, shared reports). */
export const ALL_KINDS: readonly RedactionKind[] = [...KEY_KINDS, 'email', 'home_path'];

/** Known secret values (and lines of them) shorter than this are not searched for: they would match ordinary words. */
export const MIN_SECRET_LENGTH = 8;

export interface RedactOptions {
  /** Exact secret values (e.g. API keys from the environment); a multi-line value is also searched line by line. */
  secrets?: Iterable<string>;
  /** What to redact; default KEY_KINDS. */
  kinds?: readonly RedactionKind[];
  /** Home folders to replace by `~` (with `home_path`), besides the usual /home/NAME forms. */
  homeDirs?: readonly string[];
}

export interface Redaction {
  text: string;
  /** Replacements per kind (every kind present, 0 when none). */
  counts: Record<RedactionKind, number>;
  total: number;
}

export function marker(kind: RedactionKind): string {
  return `[redacted:${kind}]`;
}

/** A marker already in a text (left by an earlier redaction), with its kind. */
export const MARKER = /\[redacted:([a-z_]+)\]/g;

const PERSONAL_RULES: readonly (Omit<ShapeRule, 'kind'> & { kind: 'email' | 'home_path' })[] = [
  {
    kind: 'email',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])/g,
  },
  { kind: 'home_path', pattern: /(?<![\w.-])(?:\/home\/|\/Users\/|[A-Za-z]:\\Users\\)[^/\\\s"'`:;,)\]}<>]+/g, replace: () => '~' },
];

/** Prefixed shapes a line break may cut in two; assignments and PEM blocks span lines on their own. */
const WRAPPABLE = new Set<RedactionKind>(['sk_key', 'jwt', 'aws_access_key', 'github_token', 'google_api_key', 'slack_token']);

const ZERO_COUNTS = Object.freeze(Object.fromEntries(ALL_KINDS.map((k) => [k, 0])) as Record<RedactionKind, number>);

export function emptyCounts(): Record<RedactionKind, number> {
  return { ...ZERO_COUNTS };
}

function replaceAll(text: string, needle: string, by: string): { text: string; count: number } {
  if (!text.includes(needle)) return { text, count: 0 };
  const parts = text.split(needle);
  return { text: parts.length === 1 ? text : parts.join(by), count: parts.length - 1 };
}

const PEM_ARMOR = /^-----(?:BEGIN|END) [A-Z0-9 ]+-----$/;

/**
 * What to search for when `value` is secret: the value, and each line of a multi-line one (a PEM
 * key reaches a log one line at a time), without the PEM armor lines and short lines.
 */
export function secretPieces(value: string): string[] {
  const pieces = value.length >= MIN_SECRET_LENGTH ? [value] : [];
  if (/[\r\n]/.test(value))
    for (const line of value.split(/\r?\n|\r/)) {
      const piece = line.trim();
      if (piece.length >= MIN_SECRET_LENGTH && !PEM_ARMOR.test(piece)) pieces.push(piece);
    }
  return pieces;
}

// The same list is passed for every event of a run (known-secrets.ts): its pieces are worked out once.
const piecesOf = new WeakMap<object, string[]>();

/** Longest first, so a secret that contains another is replaced whole. */
function usableSecrets(secrets: Iterable<string> | undefined): string[] {
  if (secrets === undefined) return [];
  const cached = piecesOf.get(secrets);
  if (cached) return cached;
  const list = new Set<string>();
  for (const s of secrets) for (const piece of secretPieces(s)) list.add(piece);
  const sorted = [...list].sort((a, b) => b.length - a.length);
  if (Array.isArray(secrets) && Object.isFrozen(secrets)) piecesOf.set(secrets, sorted);
  return sorted;
}

const SHORTEST_MATCH = 8;

/**
 * False when `text` certainly holds none of the credentials (KEY_KINDS) nor `secrets`: lets hot
 * paths (every run event) skip `redact` for clean text.
 */
export function mayHoldCredential(text: string, secrets: readonly string[]): boolean {
  if (text.length < SHORTEST_MATCH) return false;
  if (SHAPE_HINT.test(text) || (ASSIGNMENT_HINT.test(text) && /[:=]/.test(text)) || mayBeEncoded(text)) return true;
  for (const secret of secrets) if (text.includes(secret)) return true;
  return false;
}

/** A given home folder, as a whole folder name only: /home/al is not the start of /home/alice. */
function homePattern(home: string): RegExp {
  const literal = home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${literal}(?=$|[/\\\\\\s"'\`:;,)\\]}<>])`, 'g');
}

interface Pass {
  kinds: ReadonlySet<RedactionKind>;
  secrets: readonly string[];
  counts: Record<RedactionKind, number>;
  /** Encodings inside encodings (base64 of a URL-encoded line): two levels. */
  depth: number;
}

function applyRule(text: string, rule: Pick<ShapeRule, 'pattern' | 'replace'> & { kind: RedactionKind }, pass: Pass): string {
  const mark = marker(rule.kind);
  return text.replace(rule.pattern, (match: string, ...rest: unknown[]) => {
    const groups = rest.slice(0, -2) as (string | undefined)[];
    const replaced = rule.replace ? rule.replace(mark, match, groups) : mark;
    if (replaced !== match) pass.counts[rule.kind] += 1;
    return replaced;
  });
}

interface Edit {
  start: number;
  end: number;
  replacement: string;
}

function applyEdits(text: string, edits: Edit[]): string {
  if (edits.length === 0) return text;
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const edit of edits) {
    if (edit.start < at) continue;
    out += text.slice(at, edit.start) + edit.replacement;
    at = edit.end;
  }
  return out + text.slice(at);
}

/** Where `match` and its replacement differ: a rule may keep a name or a "Bearer " in front. */
function changedPart(match: string, replaced: string): { head: number; tail: number } {
  let head = 0;
  while (head < match.length && head < replaced.length && match[head] === replaced[head]) head++;
  let tail = 0;
  while (tail < match.length - head && tail < replaced.length - head && match.at(-1 - tail) === replaced.at(-1 - tail)) tail++;
  return { head, tail };
}

const LINE_BREAK = /(\r?\n[ \t]*)/;

/**
 * Secrets found in a decoded view of `text` (escapes decoded, wrapped lines joined) that the raw
 * text does not show whole: each replaced over the original range it came from. A wrapped token
 * keeps its line breaks, a marker on each line.
 */
function viewEdits(text: string, view: View, pass: Pass, wrapped: boolean): Edit[] {
  const edits: Edit[] = [];
  const add = (kind: RedactionKind, start: number, end: number, replacement: string): void => {
    const range = view.origin(start, end);
    // In a joined view, only what a line break cut in two: a whole token is the raw pass's.
    if (wrapped && range.end - range.start === end - start) return;
    if (edits.some((x) => x.start < range.end && range.start < x.end)) return;
    pass.counts[kind] += 1;
    const original = text.slice(range.start, range.end);
    const lines = original.split(LINE_BREAK);
    edits.push({ ...range, replacement: wrapped ? lines.map((p, i) => (i % 2 === 1 ? p : marker(kind))).join('') : replacement });
  };
  if (pass.kinds.has('secret_value'))
    for (const secret of pass.secrets)
      for (let i = view.text.indexOf(secret); i !== -1; i = view.text.indexOf(secret, i + secret.length))
        add('secret_value', i, i + secret.length, marker('secret_value'));
  if (!SHAPE_HINT.test(view.text) && !ASSIGNMENT_HINT.test(view.text)) return edits;
  for (const rule of SHAPE_RULES) {
    if (!pass.kinds.has(rule.kind) || (wrapped && !WRAPPABLE.has(rule.kind))) continue;
    const mark = marker(rule.kind);
    rule.pattern.lastIndex = 0;
    for (let m = rule.pattern.exec(view.text); m !== null; m = rule.pattern.exec(view.text)) {
      const replaced = rule.replace ? rule.replace(mark, m[0], m.slice(1)) : mark;
      if (replaced === m[0]) continue;
      const { head, tail } = changedPart(m[0], replaced);
      add(rule.kind, m.index + head, m.index + m[0].length - tail, replaced.slice(head, replaced.length - tail));
    }
  }
  return edits;
}

/** Base64 runs that decode to text holding a secret, each replaced whole by the marker of what it held. */
function base64Edits(text: string, pass: Pass): Edit[] {
  const edits: Edit[] = [];
  for (const span of base64Spans(text)) {
    const inner = redactPass(span.decoded, { ...pass, counts: emptyCounts(), depth: pass.depth + 1 });
    const found = KEY_KINDS.find((k) => inner.counts[k] > 0);
    if (!found) continue;
    for (const k of KEY_KINDS) pass.counts[k] += inner.counts[k];
    edits.push({ start: span.start, end: span.end, replacement: marker(found) });
  }
  return edits;
}

function redactPass(text: string, pass: Pass): { text: string; counts: Record<RedactionKind, number> } {
  let out = text;
  if (pass.kinds.has('secret_value')) {
    for (const secret of pass.secrets) {
      const step = replaceAll(out, secret, marker('secret_value'));
      out = step.text;
      pass.counts.secret_value += step.count;
    }
  }
  // Tokens cut across lines (a piece too short to match alone, joined with the next line's) first:
  // the raw pass would take the first line's piece of a long one and leave the rest.
  const wrapped = unwrappedView(out);
  if (wrapped) out = applyEdits(out, viewEdits(out, wrapped, pass, true));
  // Escaped forms before the raw pass too: it would take a piece (`AKIA…` before `%20`) and leave the rest.
  for (const build of [jsonUnescapedView, percentDecodedView]) {
    const view = build(out);
    if (view) out = applyEdits(out, viewEdits(out, view, pass, false));
  }
  const shapes = SHAPE_HINT.test(out);
  const assignments = ASSIGNMENT_HINT.test(out);
  for (const rule of SHAPE_RULES) {
    if (!pass.kinds.has(rule.kind)) continue;
    if (rule.kind === 'secret_assignment' ? !assignments : !shapes) continue;
    out = applyRule(out, rule, pass);
  }
  if (pass.depth < 2) out = applyEdits(out, base64Edits(out, pass));
  return { text: out, counts: pass.counts };
}

/**
 * A field's string value: the whole value when the field's name says secret and the value looks
 * like one (`{"auth_token": "…"}` has no `=` for the assignment rule to see), else `redact`.
 */
export function redactField(key: string, text: string, options: RedactOptions = {}): Redaction {
  const kinds = new Set(options.kinds ?? KEY_KINDS);
  if (kinds.has('secret_assignment') && isSecretFieldValue(key, text)) {
    const counts = emptyCounts();
    counts.secret_assignment = 1;
    return { text: marker('secret_assignment'), counts, total: 1 };
  }
  return redact(text, options);
}

/** Replaces the chosen kinds of secrets and personal details in `text`; counts what it replaced. */
export function redact(text: string, options: RedactOptions = {}): Redaction {
  const kinds = new Set(options.kinds ?? KEY_KINDS);
  const pass: Pass = { kinds, secrets: usableSecrets(options.secrets), counts: emptyCounts(), depth: 0 };
  let out = redactPass(text, pass).text;
  if (kinds.has('home_path')) {
    const homes = [...new Set(options.homeDirs ?? [])]
      .map((h) => h.replace(/[/\\]+$/, ''))
      .filter((h) => h.length > 1)
      .sort((a, b) => b.length - a.length);
    for (const home of homes) {
      out = out.replace(homePattern(home), () => {
        pass.counts.home_path += 1;
        return '~';
      });
    }
  }
  for (const rule of PERSONAL_RULES) if (kinds.has(rule.kind)) out = applyRule(out, rule, pass);
  const total = Object.values(pass.counts).reduce((a, b) => a + b, 0);
  return { text: total === 0 ? text : out, counts: pass.counts, total };
}

/**
 * Redacts every string inside a JSON-like value (objects, arrays); returns the same object when
 * nothing changed, so callers on hot paths pay no copy for clean data. `redactField`, when given,
 * cleans a string that is an object's field instead, knowing the field's name (`password: …`).
 */
export function redactDeep<T>(value: T, redactString: (text: string) => string, redactField?: (key: string, text: string) => string): T {
  if (typeof value === 'string') return redactString(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = redactDeep(item, redactString, redactField);
      if (next !== item) (copy ??= [...value])[i] = next;
    }
    return (copy ?? value) as T;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    for (const key in record) {
      const item = record[key];
      const next = typeof item === 'string' && redactField ? redactField(key, item) : redactDeep(item, redactString, redactField);
      if (next !== item) (copy ??= { ...record })[key] = next;
    }
    return (copy ?? value) as T;
  }
  return value;
}
