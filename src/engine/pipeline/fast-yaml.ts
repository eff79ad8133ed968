// A fast path for the common, strict subset of YAML that pipeline files use. parseYamlFast gives
// the same plain data as the yaml library with its default YAML 1.2 core schema (see
// yaml-source.ts), or `undefined` whenever the text goes outside the subset or anything is
// uncertain: the caller then parses with the yaml library, which also produces the located error
// messages. locateYamlFast reads the same text again and tells where each node is, for spans.
//
// Subset: comments and blank lines, an optional `---` first line; block mappings and sequences by
// indentation (spaces only), compact `- key: value` entries, a sequence at its key's indentation;
// single-line flow collections; single-line plain, single- and double-quoted scalars; literal and
// folded block scalars (`|`, `|-`, `>`, `>-`) whose lines are all at one indentation (folded) or
// at least it (literal). Everything else gives `undefined`.

import { BLOCK_END, NodeTable } from './fast-yaml-locate.ts';
import { bail, decodeEscape, plainKey, resolvePlain } from './fast-yaml-scalars.ts';

const NL = 10;
const SPACE = 32;
const DQ = 34;
const HASH = 35;
const PERCENT = 37;
const SQ = 39;
const COMMA = 44;
const DASH = 45;
const DOT = 46;
const COLON = 58;
const GT = 62;
const LBRACKET = 91;
const RBRACKET = 93;
const LBRACE = 123;
const PIPE = 124;
const RBRACE = 125;

// Sticky runs of ordinary characters: one regex call per token, not per character.
const PLAIN_BLOCK_RUN = /[^:#\n]*/y;
const PLAIN_FLOW_RUN = /[^:#\n,[\]{}]*/y;
const SINGLE_QUOTED_RUN = /[^'\n]*/y;
const DOUBLE_QUOTED_RUN = /[^"\\\n]*/y;
/** Characters never in the subset: tabs, control and special line-break characters, BOM, a lone CR. */
const ODD_CHARACTERS = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u2028\u2029\ufffe\uffff]|\r(?!\n)/;

const MAX_DEPTH = 200;

/** yaml rejects implicit keys longer than 1024 characters; stay well below. */
const MAX_KEY_LENGTH = 1000;

function isFlowIndicator(c: number): boolean {
  return c === COMMA || c === LBRACKET || c === RBRACKET || c === LBRACE || c === RBRACE;
}

/** 1 for the characters that cannot start a plain scalar (YAML c-indicator); `-` is handled by the callers. */
const INDICATOR = new Uint8Array(128);
for (const c of '?:,[]{}#&*!|>\'"%@`') INDICATOR[c.charCodeAt(0)] = 1;

function setKey(out: Record<string, unknown>, key: string, value: unknown): void {
  // Values are never undefined, so only a defined one can be an own duplicate (reported by the yaml path).
  if (out[key] !== undefined && Object.hasOwn(out, key)) bail();
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

class Scanner {
  private readonly s: string;
  private readonly len: number;
  /** Current position. */
  private p = 0;
  /** Start of the current line. */
  private lineStart = 0;
  /** Indentation of the current content line (p is at its first character), -1 at the end. */
  private ind = -1;
  /** Set by the plain scanners: the scalar ended at a `: ` mapping indicator. */
  private endedAtColon = false;
  private depth = 0;
  /** Items of the flow sequences being read. */
  private readonly stack: unknown[] = [];
  private stackTop = 0;
  /** Where the last scalar read (its quotes included) starts and ends. */
  private tokenStart = 0;
  private tokenEnd = 0;
  /** Where the last node read starts and ends, and its container id in the table (-1 for a scalar). */
  private nodeStart = 0;
  private nodeEnd = 0;
  private nodeContainer = -1;
  private hasNode = false;

  /** With a table, the scanner also records where every node is (see fast-yaml-locate.ts). */
  constructor(
    text: string,
    private readonly table: NodeTable | null = null,
  ) {
    this.s = text;
    this.len = text.length;
  }

  private placed(start: number, end: number, container = -1): void {
    this.nodeStart = start;
    this.nodeEnd = end;
    this.nodeContainer = container;
  }

  /** Records the last node read as the next child of the container being read. */
  private addChild(table: NodeTable, keyStart: number, keyEnd: number, key: string): void {
    // A key ending in `#key` shares its pointer with the key of another entry: leave that to yaml.
    if (key.endsWith('#key')) bail();
    table.addChild(this.nodeStart, this.nodeEnd, keyStart, keyEnd, this.nodeContainer, key);
  }

  /** After document(), with a table: notes where the document's node is. */
  placeRoot(): void {
    if (this.hasNode) this.table?.setRoot(this.nodeStart, this.nodeEnd, this.nodeContainer);
  }

  document(): unknown {
    this.nextContentLine(true);
    let marker = -1;
    if (this.ind === 0 && this.s.startsWith('---', this.p) && this.isBlank(this.p + 3)) {
      marker = this.p + 3;
      this.p = marker;
      this.endOfLine();
      this.nextContentLine(false);
    }
    this.hasNode = this.ind >= 0 || marker >= 0;
    if (this.ind < 0) return marker < 0 ? null : this.empty(marker); // yaml places `---`'s empty node
    const value = this.node(this.ind, -1, false);
    if (this.ind >= 0) bail();
    return value;
  }

  /** End of text, space or line break at i. */
  private isBlank(i: number): boolean {
    if (i >= this.len) return true;
    const c = this.s.charCodeAt(i);
    return c === SPACE || c === NL;
  }

  /** From a line start, skips blank and comment lines; stops at the next content line's first character. */
  private nextContentLine(allowDocStart: boolean): void {
    const { s, len } = this;
    let p = this.p;
    while (p < len) {
      let q = p;
      while (q < len && s.charCodeAt(q) === SPACE) q += 1;
      if (q >= len) break;
      const c = s.charCodeAt(q);
      if (c === NL) {
        p = q + 1;
        continue;
      }
      if (c === HASH) {
        const nl = s.indexOf('\n', q);
        if (nl < 0) break;
        p = nl + 1;
        continue;
      }
      if (q === p && (c === DASH || c === DOT || c === PERCENT)) {
        // A document marker or a directive: only a first `---` is allowed.
        if (c === PERCENT) bail();
        const marker = c === DASH ? '---' : '...';
        if (s.startsWith(marker, q) && !(allowDocStart && c === DASH && this.isBlank(q + 3))) bail();
      }
      this.lineStart = p;
      this.p = q;
      this.ind = q - p;
      return;
    }
    this.p = len;
    this.lineStart = len;
    this.ind = -1;
  }

  /** After a value: spaces, an optional comment, then the line break or the end. */
  private endOfLine(): void {
    const { s, len } = this;
    const start = this.p;
    let p = start;
    while (p < len && s.charCodeAt(p) === SPACE) p += 1;
    if (p >= len) {
      this.p = len;
      return;
    }
    const c = s.charCodeAt(p);
    if (c === NL) {
      this.p = p + 1;
      return;
    }
    if (c === HASH && p > start) {
      const nl = s.indexOf('\n', p);
      this.p = nl < 0 ? len : nl + 1;
      return;
    }
    bail();
  }

  private finishLine(): void {
    this.endOfLine();
    this.nextContentLine(false);
  }

  private enter(): void {
    this.depth += 1;
    if (this.depth > MAX_DEPTH) bail();
  }

  /**
   * A block node whose first character is at p, in column col. `parent` is the indentation of
   * the enclosing collection; `sameLine` is true for the content of a `- ` entry.
   */
  private node(col: number, parent: number, sameLine: boolean): unknown {
    const c = this.s.charCodeAt(this.p);
    if (c === DASH && this.isBlank(this.p + 1)) return this.blockSeq(col);
    if (c === PIPE || c === GT) {
      if (!sameLine) bail();
      return this.blockScalar(parent);
    }
    if (c === DQ || c === SQ) {
      const start = this.p;
      const text = this.quoted(c);
      let q = this.p;
      while (this.s.charCodeAt(q) === SPACE) q += 1;
      if (this.s.charCodeAt(q) === COLON && this.isBlank(q + 1)) {
        if (q - start > MAX_KEY_LENGTH) bail();
        this.p = q;
        return this.blockMap(col, text);
      }
      this.placed(this.tokenStart, this.tokenEnd);
      this.finishLine();
      return text;
    }
    if (c === LBRACKET || c === LBRACE) {
      const value = this.flowNode();
      this.finishLine();
      return value;
    }
    const raw = this.plainBlock();
    if (this.endedAtColon) return this.blockMap(col, plainKey(raw));
    this.placed(this.tokenStart, this.tokenEnd);
    this.finishLine();
    return resolvePlain(raw);
  }

  /** The value of an entry with nothing after its indicator: null, placed after the indicator's spaces. */
  private empty(indicatorEnd: number): null {
    let q = indicatorEnd;
    while (this.s.charCodeAt(q) === SPACE) q += 1;
    this.placed(q, q);
    return null;
  }

  /** A block sequence at indentation n; p is at its first `-`. */
  private blockSeq(n: number): unknown[] {
    this.enter();
    const start = this.p;
    const { table } = this;
    const mark = table ? table.mark() : 0;
    const out: unknown[] = [];
    for (;;) {
      const dash = this.p;
      let q = dash + 1;
      while (this.s.charCodeAt(q) === SPACE) q += 1;
      const c = this.s.charCodeAt(q);
      if (q >= this.len || c === NL || c === HASH) {
        this.p = dash + 1;
        this.finishLine();
        out.push(this.ind > n ? this.node(this.ind, n, false) : this.empty(dash + 1));
      } else {
        this.p = q;
        out.push(this.node(q - this.lineStart, n, true));
      }
      if (table) this.addChild(table, -1, -1, '');
      if (this.ind === n && this.s.charCodeAt(this.p) === DASH && this.isBlank(this.p + 1)) continue;
      if (this.ind > n) bail();
      this.depth -= 1;
      this.placed(start, BLOCK_END, table ? table.close(mark, false) : -1);
      return out;
    }
  }

  /** A block mapping at indentation n whose first key has been read (tokenStart/End); p is at its `:`. */
  private blockMap(n: number, firstKey: string): Record<string, unknown> {
    this.enter();
    const start = this.tokenStart;
    const { table } = this;
    const mark = table ? table.mark() : 0;
    const out: Record<string, unknown> = {};
    let key = firstKey;
    for (;;) {
      const keyStart = this.tokenStart;
      const keyEnd = this.tokenEnd;
      this.p += 1; // the ':'
      setKey(out, key, this.mapValue(n));
      if (table) this.addChild(table, keyStart, keyEnd, key);
      if (this.ind !== n) {
        if (this.ind > n) bail();
        this.depth -= 1;
        this.placed(start, BLOCK_END, table ? table.close(mark, true) : -1);
        return out;
      }
      key = this.mapKey();
    }
  }

  /** A key at the start of a mapping line; leaves p at its `:`. */
  private mapKey(): string {
    const start = this.p;
    const c = this.s.charCodeAt(start);
    if (c === DQ || c === SQ) {
      const text = this.quoted(c);
      let q = this.p;
      while (this.s.charCodeAt(q) === SPACE) q += 1;
      if (this.s.charCodeAt(q) !== COLON || !this.isBlank(q + 1) || q - start > MAX_KEY_LENGTH) bail();
      this.p = q;
      return text;
    }
    const raw = this.plainBlock();
    if (!this.endedAtColon) bail();
    return plainKey(raw);
  }

  /** The value after `key:` in a block mapping at indentation n. */
  private mapValue(n: number): unknown {
    const colonEnd = this.p;
    let q = colonEnd;
    while (this.s.charCodeAt(q) === SPACE) q += 1;
    const c = this.s.charCodeAt(q);
    if (q >= this.len || c === NL || c === HASH) {
      this.finishLine();
      if (this.ind > n) return this.node(this.ind, n, false);
      if (this.ind === n && this.s.charCodeAt(this.p) === DASH && this.isBlank(this.p + 1)) return this.blockSeq(n);
      return this.empty(colonEnd);
    }
    this.p = q;
    if (c === PIPE || c === GT) return this.blockScalar(n);
    if (c === DASH && this.isBlank(q + 1)) bail();
    let value: unknown;
    if (c === LBRACKET || c === LBRACE) value = this.flowNode();
    else {
      if (c === DQ || c === SQ) value = this.quoted(c);
      else {
        const raw = this.plainBlock();
        if (this.endedAtColon) bail();
        value = resolvePlain(raw);
      }
      this.placed(this.tokenStart, this.tokenEnd);
    }
    this.finishLine();
    return value;
  }

  /** A plain scalar on one line in block context; p ends at the `:` of a key, before ` #`, or at the line end. */
  private plainBlock(): string {
    const { s, len } = this;
    const start = this.p;
    const first = s.charCodeAt(start);
    if (INDICATOR[first] === 1 || (first === DASH && this.isBlank(start + 1))) bail();
    this.endedAtColon = false;
    let i = start;
    for (;;) {
      PLAIN_BLOCK_RUN.lastIndex = i;
      PLAIN_BLOCK_RUN.test(s);
      i = PLAIN_BLOCK_RUN.lastIndex;
      if (i >= len) break;
      const c = s.charCodeAt(i);
      if (c === COLON) {
        if (!this.isBlank(i + 1)) {
          i += 1;
          continue;
        }
        if (i - start > MAX_KEY_LENGTH) bail();
        this.endedAtColon = true;
        break;
      }
      if (c === HASH) {
        if (s.charCodeAt(i - 1) === SPACE) {
          i -= 1;
          break;
        }
        i += 1;
        continue;
      }
      break; // the line break
    }
    return this.plainToken(start, i);
  }

  /** A plain scalar in a flow collection: a key (ending at `: `, p left at the colon) or a value (ending before `,[]{}`). */
  private plainFlow(key: boolean): string {
    const { s, len } = this;
    const start = this.p;
    const first = s.charCodeAt(start);
    if (INDICATOR[first] === 1) bail();
    if (first === DASH) {
      const next = s.charCodeAt(start + 1);
      if (next === SPACE || next === NL || start + 1 >= len || isFlowIndicator(next)) bail();
    }
    let i = start;
    for (;;) {
      PLAIN_FLOW_RUN.lastIndex = i;
      PLAIN_FLOW_RUN.test(s);
      i = PLAIN_FLOW_RUN.lastIndex;
      if (i >= len) bail();
      const c = s.charCodeAt(i);
      if (c === HASH) {
        if (s.charCodeAt(i - 1) === SPACE) bail(); // a comment inside a flow collection
        i += 1;
        continue;
      }
      if (c === COLON) {
        if (!key || s.charCodeAt(i + 1) !== SPACE) bail();
      } else if (key || c === NL) bail();
      break; // a flow indicator, or the `: ` after a key
    }
    return this.plainToken(start, i);
  }

  /** Ends a plain scalar that runs from `start` to before `i`, trailing spaces left out; p moves to `i`. */
  private plainToken(start: number, i: number): string {
    let end = i;
    while (end > start && this.s.charCodeAt(end - 1) === SPACE) end -= 1;
    this.p = i;
    this.tokenStart = start;
    this.tokenEnd = end;
    return this.s.slice(start, end);
  }

  private quoted(quote: number): string {
    this.tokenStart = this.p;
    const text = quote === DQ ? this.doubleQuoted() : this.singleQuoted();
    this.tokenEnd = this.p;
    return text;
  }

  private singleQuoted(): string {
    const { s, len } = this;
    let i = this.p + 1;
    let chunk = i;
    let out = '';
    for (;;) {
      SINGLE_QUOTED_RUN.lastIndex = i;
      SINGLE_QUOTED_RUN.test(s);
      i = SINGLE_QUOTED_RUN.lastIndex;
      if (i >= len || s.charCodeAt(i) === NL) bail(); // unclosed on this line
      // at a quote
      if (s.charCodeAt(i + 1) === SQ) {
        out += s.slice(chunk, i + 1);
        i += 2;
        chunk = i;
        continue;
      }
      this.p = i + 1;
      return out + s.slice(chunk, i);
    }
  }

  private doubleQuoted(): string {
    const { s, len } = this;
    let i = this.p + 1;
    let chunk = i;
    let out = '';
    for (;;) {
      DOUBLE_QUOTED_RUN.lastIndex = i;
      DOUBLE_QUOTED_RUN.test(s);
      i = DOUBLE_QUOTED_RUN.lastIndex;
      if (i >= len) bail();
      const c = s.charCodeAt(i);
      if (c === NL) bail();
      if (c === DQ) {
        this.p = i + 1;
        return out + s.slice(chunk, i);
      }
      // a backslash
      out += s.slice(chunk, i);
      const decoded = decodeEscape(s, i);
      out += decoded.text;
      i = decoded.next;
      chunk = i;
    }
  }

  /** Skips spaces in a flow collection, which must close on this line; returns the next character. */
  private flowSpaces(): number {
    const { s } = this;
    let p = this.p;
    let c = s.charCodeAt(p);
    while (c === SPACE) {
      p += 1;
      c = s.charCodeAt(p);
    }
    this.p = p;
    if (c === NL || p >= this.len) bail();
    return c;
  }

  /** A flow collection at p, in block context. */
  private flowNode(): unknown {
    return this.s.charCodeAt(this.p) === LBRACKET ? this.flowSeq() : this.flowMap();
  }

  /** An entry of a flow collection, starting with c at p. */
  private flowItem(c: number): unknown {
    if (c === LBRACKET) return this.flowSeq();
    if (c === LBRACE) return this.flowMap();
    const value = c === DQ || c === SQ ? this.quoted(c) : resolvePlain(this.plainFlow(false));
    this.placed(this.tokenStart, this.tokenEnd);
    return value;
  }

  private flowSeq(): unknown[] {
    this.enter();
    const start = this.p;
    const { table } = this;
    const mark = table ? table.mark() : 0;
    this.p += 1;
    // Items go on a shared stack first, so that each array is made at its exact size.
    const { stack } = this;
    const base = this.stackTop;
    let top = base;
    let c = this.flowSpaces();
    while (c !== RBRACKET) {
      stack[top] = this.flowItem(c);
      top += 1;
      this.stackTop = top;
      if (table) this.addChild(table, -1, -1, '');
      c = this.flowSpaces();
      if (c === COMMA) {
        this.p += 1;
        c = this.flowSpaces(); // `]` after a trailing comma ends the sequence too
      } else if (c !== RBRACKET) bail();
    }
    this.p += 1;
    this.depth -= 1;
    this.stackTop = base;
    this.placed(start, this.p, table ? table.close(mark, false) : -1);
    return stack.slice(base, top);
  }

  private flowMap(): Record<string, unknown> {
    this.enter();
    const start = this.p;
    const { table } = this;
    const mark = table ? table.mark() : 0;
    this.p += 1;
    const out: Record<string, unknown> = {};
    let c = this.flowSpaces();
    while (c !== RBRACE) {
      let key: string;
      if (c === DQ || c === SQ) {
        key = this.quoted(c);
        if (this.flowSpaces() !== COLON) bail();
      } else key = plainKey(this.plainFlow(true));
      const keyStart = this.tokenStart;
      const keyEnd = this.tokenEnd;
      this.p += 1; // the ':'
      c = this.flowSpaces();
      if (c === COMMA || c === RBRACE) bail(); // an empty value
      setKey(out, key, this.flowItem(c));
      if (table) this.addChild(table, keyStart, keyEnd, key);
      c = this.flowSpaces();
      if (c === COMMA) {
        this.p += 1;
        c = this.flowSpaces(); // `}` after a trailing comma ends the mapping too
      } else if (c !== RBRACE) bail();
    }
    this.p += 1;
    this.depth -= 1;
    this.placed(start, this.p, table ? table.close(mark, true) : -1);
    return out;
  }

  /** `|`, `|-`, `>` or `>-` at p, as the value of an entry of a collection at indentation n. */
  private blockScalar(n: number): string {
    const { s, len } = this;
    const start = this.p;
    const folded = s.charCodeAt(this.p) === GT;
    let q = this.p + 1;
    const strip = s.charCodeAt(q) === DASH;
    if (strip) q += 1;
    const after = s.charCodeAt(q);
    if (after !== SPACE && after !== NL && q < len) bail(); // keep (+), indentation indicator, anything else
    this.p = q;
    this.endOfLine();
    let trim = -1;
    let leadingWidth = 0;
    let pending = 0; // empty lines not yet placed
    let value = '';
    let sep = '';
    let line = this.p;
    while (line < len) {
      let q2 = line;
      while (q2 < len && s.charCodeAt(q2) === SPACE) q2 += 1;
      const width = q2 - line;
      if (q2 >= len || s.charCodeAt(q2) === NL) {
        if (trim < 0) leadingWidth = Math.max(leadingWidth, width);
        else if (width > trim) bail(); // spaces-only lines wider than the text: not worth the doubt
        pending += 1;
        line = q2 + 1;
        continue;
      }
      if (trim < 0) {
        if (width <= n) break;
        if (leadingWidth > width) bail();
        trim = width;
        value = '\n'.repeat(pending);
        pending = 0;
      } else if (width < trim) {
        if (width <= n) break;
        bail();
      } else if (width > trim && folded) bail(); // more-indented folded lines keep their breaks
      const nl = s.indexOf('\n', q2);
      const end = nl < 0 ? len : nl;
      const content = s.slice(line + trim, end);
      if (folded) {
        for (; pending > 0; pending -= 1) {
          if (sep === '\n') value += '\n';
          else sep = '\n';
        }
        value += sep + content;
        sep = ' ';
      } else {
        for (; pending > 0; pending -= 1) {
          value += sep;
          sep = '\n';
        }
        value += sep + content;
        sep = '\n';
      }
      line = end + 1;
    }
    if (trim < 0) bail(); // an empty block scalar
    this.p = Math.min(line, len);
    this.nextContentLine(false);
    this.placed(start, BLOCK_END);
    return strip ? value : `${value}\n`;
  }
}

/**
 * Parses a YAML document in the fast subset: the same value as yaml-source.ts's parse with the yaml
 * library, or `undefined` when the text is outside the subset (or not certainly valid).
 */
export function parseYamlFast(text: string): { value: unknown } | undefined {
  if (ODD_CHARACTERS.test(text)) return undefined;
  const source = text.includes('\r') ? text.replaceAll('\r\n', '\n') : text;
  try {
    return { value: new Scanner(source).document() };
  } catch {
    // BAIL, or anything unexpected (e.g. a stack overflow): the yaml library takes over.
    return undefined;
  }
}

/**
 * Where the nodes of a document parseYamlFast takes are, by JSON pointer (`pointer#key` for a
 * mapping key): the places yaml-source.ts records from the yaml library, as far as a span shows
 * them. `undefined` when the text is outside the subset, has CRLF line breaks (the fast scanner reads
 * it with LF ones) or a key ending in `#key`.
 */
export function locateYamlFast(text: string): NodeTable | undefined {
  if (ODD_CHARACTERS.test(text) || text.includes('\r')) return undefined;
  try {
    const table = new NodeTable();
    const scanner = new Scanner(text, table);
    scanner.document();
    scanner.placeRoot();
    return table;
  } catch {
    return undefined;
  }
}
