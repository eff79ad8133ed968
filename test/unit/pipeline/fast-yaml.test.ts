import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseYamlFast } from '../../../src/engine/pipeline/fast-yaml.ts';
import { parseLocatedYaml, parseLocatedYamlWithLibrary, pointerOf } from '../../../src/engine/pipeline/yaml-source.ts';
import { makeDag, refineryPipeline } from '../../../bench/graph/generate.ts';
import { mulberry32 } from '../../../src/workflows/refine/seeded.ts';

const root = path.resolve(import.meta.dirname, '../../..');

/** A text form of a value that tells apart key order, -0, prototypes and types (toEqual does not). */
function canonical(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  switch (typeof value) {
    case 'number':
      return Object.is(value, -0) ? '-0' : String(value);
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return String(value);
    case 'object': {
      const record = value as Record<string, unknown>;
      const proto = Object.getPrototypeOf(value) === Object.prototype ? '' : '<odd prototype>';
      const symbols = Object.getOwnPropertySymbols(value).length ? '<symbols>' : '';
      return `{${proto}${symbols}${Object.keys(record)
        .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
        .join(',')}}`;
    }
    default:
      return `<${typeof value}>`;
  }
}

/** Every pointer (and `#key` pointer) of a value, and some that point nowhere. */
function pointersOf(value: unknown): string[] {
  const pointers = ['', '#key', '/', '/nope', '/0', '/01', '/-0', '/1e0', '/a~2b', '/~', 'nope', '/0/nope#key'];
  const walk = (node: unknown, path: Array<string | number>): void => {
    const at = pointerOf(path);
    pointers.push(at, `${at}/0`, `${at}/zz`, `${at}/`);
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, i]));
    else if (node !== null && typeof node === 'object') {
      for (const key of Object.keys(node)) {
        pointers.push(`${pointerOf([...path, key])}#key`);
        walk((node as Record<string, unknown>)[key], [...path, key]);
      }
    }
  };
  walk(value, []);
  return pointers;
}

/**
 * The fast result must be absent, or equal to the yaml library's value for a document it reports
 * nothing on; then parseLocatedYaml (fast path) must give yaml's span for every pointer.
 */
function differential(text: string): 'fast' | 'fallback' {
  const fast = parseYamlFast(text);
  if (!fast) return 'fallback';
  const library = parseLocatedYamlWithLibrary('doc.yaml', text);
  const shown = JSON.stringify(text.length > 3000 ? `${text.slice(0, 3000)}...` : text);
  expect(library.diagnostics, `yaml reports problems the fast path missed in ${shown}`).toEqual([]);
  expect(canonical(fast.value), `fast value differs for ${shown}`).toBe(canonical(library.value));
  const located = parseLocatedYaml('doc.yaml', text);
  expect(located.diagnostics).toEqual([]);
  for (const pointer of pointersOf(fast.value)) {
    const span = located.spans.get(pointer);
    const expected = library.spans.get(pointer);
    if (JSON.stringify(span) !== JSON.stringify(expected)) expect(span, `span of ${pointer} in ${shown}`).toEqual(expected);
  }
  return 'fast';
}

function yamlFilesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !/\.ya?ml$/.test(entry.name)) continue;
    const full = path.join(entry.parentPath, entry.name);
    if (!full.includes(`${path.sep}node_modules${path.sep}`)) found.push(full);
  }
  return found.sort();
}

describe('parseYamlFast against the yaml library', () => {
  it("parseYamlFast - the repo's pipelines and examples take the fast path with yaml's values", () => {
    const files = [...yamlFilesUnder(path.join(root, 'pipelines')), ...yamlFilesUnder(path.join(root, 'examples'))];
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(differential(readFileSync(file, 'utf8')), path.relative(root, file)).toBe('fast');
  });

  it('parseYamlFast - every yaml file under test/ is parsed as yaml parses it or left to yaml', () => {
    for (const file of yamlFilesUnder(path.join(root, 'test'))) differential(readFileSync(file, 'utf8'));
  });

  it('parseYamlFast - the bench pipelines (run and task forms, 2,000 stages) take the fast path', () => {
    const dag = makeDag(2000);
    for (const kind of ['run', 'task'] as const) {
      const text = refineryPipeline(dag, kind);
      expect(differential(text), kind).toBe('fast');
      const value = parseYamlFast(text)?.value as { stages: Record<string, unknown> };
      expect(Object.keys(value.stages)).toHaveLength(2000);
    }
  });
});

// ---- random documents inside (and, mutated, just outside) the subset ----

// Scalars the fast path takes, in flow and block context.
const PLAIN = [
  'null',
  '~',
  'Null',
  'NULL',
  'nulL',
  'true',
  'True',
  'TRUE',
  'false',
  'FALSE',
  'fAlse',
  'yes',
  'no',
  'on',
  'off',
  'y',
  '0',
  '-0',
  '+1',
  '-1',
  '42',
  '1.5',
  '-0.25',
  '+2.50',
  '1e3',
  '1E-2',
  '2.5e+4',
  '0.1.91',
  '2025-12-01',
  '123456789012',
  'a#b',
  'hello world',
  'héllo ✓',
  '日本語',
  '😀 emoji',
  'x-y_z',
  '.hidden',
  '~user',
  "a'b",
  'a"b',
  '--flag',
  '-x',
  'NaN',
  'out/s1.txt',
  '__proto__',
  'constructor',
  'toString',
  'Infinity',
];
// Scalars the fast path takes only in block context (yaml reads them differently, or not at all, in flow context).
const PLAIN_BLOCK = [
  'a, b',
  'a]',
  'x[0]',
  'text {braces}',
  'a,b',
  '3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0]',
  'a #comment',
  'mid - dash',
  'x?y',
  'http://x.y/z?q=1',
  'node:20',
  'a:b:c',
  'ends with colon:x',
  '${params.x}',
  '${item.path}/**',
  'cksum a b > ${outputs.o}',
];
const QUOTED = [
  '"1"',
  '""',
  "''",
  "'it''s'",
  '"a: b"',
  "'a # b'",
  '"x, [y] {z}"',
  '"esc \\" \\\\ \\/ \\n \\t \\r \\0 \\b \\e \\a \\v \\f"',
  '"\\x41\\u00e9\\U0001F600"',
  '"\\uD83D\\uDE00"',
  '\'single "dq"\'',
  '"__proto__"',
  "'  spaced  '",
  '"#not comment"',
  '"unicode ✓ 日本"',
  "'\\n stays'",
  '"null"',
  "'true'",
  '"-1"',
  '"tab\\there"',
];
// Scalars the fast path refuses (yaml may take them, differently or with errors): used sparingly.
const REFUSED = [
  '012',
  '0x1F',
  '0o17',
  '0b101',
  '.inf',
  '-.Inf',
  '.nan',
  '1_000',
  '1:30',
  '12:30:00',
  '1.',
  '.5',
  '00.5',
  '9007199254740993',
  '1e999',
  '-',
  '?q',
  ':x',
  '@at',
  '`tick`',
  '%pct',
  '!tag x',
  '&anchor x',
  '*alias',
  '|',
  '>',
  '"\\q"',
  '"\\ "',
  '"\\N"',
  '"\\x4"',
  '"\\U00110000"',
  '"unclosed',
  "'unclosed",
  '"a" b',
  '[a',
  '{a: 1',
  'a: b',
  'q: "r"',
  'trailing:',
];
const PLAIN_KEYS = [
  'a',
  'b',
  'c',
  'key',
  'name',
  'run',
  'task',
  'with',
  'inputs',
  'outputs',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '1',
  '-1',
  '+1',
  'true',
  'False',
  'null',
  '~',
  '1.5',
  '1e3',
  '0.5',
  'x y',
  's1',
  'ключ',
  'a.b',
  'a-b',
  'a#b',
  '-k',
  'valueOf',
  '2',
  '10',
  'key:x',
  'a/b',
  'a~b',
  '~0',
  'x#key',
];
const QUOTED_KEYS = ['"quoted key"', "'single'", '"a: b"', "''", '"__proto__"', '"1"', '"x\\ty"', "'it''s'", '"a, b"', '"k#"'];
const REFUSED_KEYS = ['01', '<<', '? a', '&k a', '[k]', '"k\\q"', '@k', '.inf'];
const BLOCK_SCALAR_LINES = ['text', 'more text', '# not a comment', 'a: b', '- item', '"quoted"', 'trailing  ', '{flow}', 'ünï'];
const MUTATIONS = [
  '&a ',
  '*a',
  '!!str ',
  '? ',
  '|',
  '>',
  '%',
  '\t',
  ': ',
  ' #',
  "'",
  '"',
  '- ',
  '\n  ',
  '\n',
  ',',
  ']',
  '}',
  '[',
  '{',
  '---\n',
  '...\n',
  '\\',
  '\r',
  '\u2028',
  ' ',
  ':',
  '#',
  '\n- ',
  '\n\n',
  '\uFEFF',
  '\u0085',
  '\u0007',
];

class DocumentGenerator {
  private readonly rand: () => number;

  constructor(seed: number) {
    this.rand = mulberry32(seed);
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.rand() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)] as T;
  }

  comment(): string {
    return this.chance(0.15) ? ` ${' '.repeat(this.int(0, 2))}# note: ${this.pick(['x', 'a: b', '[1]', ''])}` : '';
  }

  blockScalarToken(): string {
    const r = this.rand();
    if (r < 0.02) return this.pick(REFUSED);
    if (r < 0.55) return this.pick(PLAIN);
    if (r < 0.7) return this.pick(PLAIN_BLOCK);
    return this.pick(QUOTED);
  }

  flowScalarToken(): string {
    const r = this.rand();
    if (r < 0.02) return this.pick(REFUSED);
    if (r < 0.025) return this.pick(PLAIN_BLOCK);
    return r < 0.7 ? this.pick(PLAIN) : this.pick(QUOTED);
  }

  key(flow: boolean): string {
    const r = this.rand();
    if (r < 0.01) return this.pick(REFUSED_KEYS);
    if (r < 0.2) return this.pick(QUOTED_KEYS);
    const key = this.pick(PLAIN_KEYS);
    return flow && /[#:]/.test(key) ? 'k' : key;
  }

  /** Keys of one mapping: mostly distinct, sometimes with a duplicate. */
  keys(count: number, flow: boolean): string[] {
    const keys: string[] = [];
    while (keys.length < count) {
      const key = this.key(flow);
      if (!keys.includes(key) || this.chance(0.01)) keys.push(key);
    }
    return keys;
  }

  step(): number {
    return this.pick([1, 2, 2, 2, 3, 4]);
  }

  spaces(): string {
    return this.chance(0.3) ? ' '.repeat(this.int(0, 2)) : '';
  }

  flow(depth: number): string {
    const count = this.int(0, 4);
    const items: string[] = [];
    const asMap = this.chance(0.5);
    const keys = asMap ? this.keys(count, true) : [];
    for (let i = 0; i < count; i += 1) {
      const value = depth < 3 && this.chance(0.2) ? this.flow(depth + 1) : this.flowScalarToken();
      if (!asMap) items.push(value);
      else {
        const key = keys[i] as string;
        const adjacent = /^["']/.test(key) && this.chance(0.3);
        items.push(`${key}${this.spaces()}:${adjacent ? '' : ' '}${this.spaces()}${value}`);
      }
    }
    const sep = this.pick([', ', ',', ' , ', ',  ']);
    const trailing = count > 0 && this.chance(0.1) ? ',' : '';
    const pad = this.chance(0.5) ? ' ' : '';
    return asMap ? `{${pad}${items.join(sep)}${trailing}${pad}}` : `[${pad}${items.join(sep)}${trailing}${pad}]`;
  }

  blockScalar(indent: number): string[] {
    const lines: string[] = [];
    const count = this.int(1, 4);
    const leading = this.chance(0.1) ? 1 : 0;
    for (let i = 0; i < leading; i += 1) lines.push('');
    for (let i = 0; i < count; i += 1) {
      if (i > 0 && this.chance(0.2)) lines.push(this.chance(0.5) ? '' : ' '.repeat(this.int(0, indent)));
      const extra = this.chance(0.1) ? ' '.repeat(this.int(1, 2)) : '';
      lines.push(`${' '.repeat(indent)}${extra}${this.pick(BLOCK_SCALAR_LINES)}`);
    }
    if (this.chance(0.2)) lines.push('');
    return lines;
  }

  between(lines: string[]): void {
    if (this.chance(0.08)) lines.push('');
    if (this.chance(0.05)) lines.push(' '.repeat(this.int(1, 6)));
    if (this.chance(0.08)) lines.push(`${' '.repeat(this.int(0, 8))}# comment ${this.pick(['', 'a: b', '- x'])}`);
  }

  map(indent: number, depth: number): string[] {
    const pad = ' '.repeat(indent);
    const lines: string[] = [];
    for (const [i, key] of this.keys(this.int(1, 4), false).entries()) {
      if (i > 0) this.between(lines);
      const r = depth >= 4 ? this.rand() * 0.6 : this.rand();
      const head = `${pad}${key}${this.chance(0.05) ? ' ' : ''}:`;
      if (r < 0.4) lines.push(`${head} ${this.blockScalarToken()}${this.comment()}`);
      else if (r < 0.5) lines.push(`${head} ${this.flow(0)}${this.comment()}`);
      else if (r < 0.55) lines.push(`${head}${this.comment()}`);
      else if (r < 0.6) {
        const step = this.step();
        lines.push(`${head} ${this.pick(['|', '|-', '>', '>-'])}${this.comment()}`, ...this.blockScalar(indent + step));
      } else if (r < 0.8) lines.push(`${head}${this.comment()}`, ...this.map(indent + this.step(), depth + 1));
      else lines.push(`${head}${this.comment()}`, ...this.seq(this.chance(0.4) ? indent : indent + this.step(), depth + 1));
    }
    return lines;
  }

  /** Lines of a nested node put after `- ` on its entry's line (a compact mapping or sequence). */
  compact(indent: number, nested: (at: number) => string[]): string[] {
    const width = this.chance(0.8) ? 2 : this.int(2, 4);
    const lines = nested(indent + width);
    lines[0] = `${' '.repeat(indent)}-${' '.repeat(width - 1)}${(lines[0] as string).slice(indent + width)}`;
    return lines;
  }

  seq(indent: number, depth: number): string[] {
    const pad = ' '.repeat(indent);
    const lines: string[] = [];
    const count = this.int(1, 4);
    for (let i = 0; i < count; i += 1) {
      if (i > 0) this.between(lines);
      const r = depth >= 4 ? this.rand() * 0.5 : this.rand();
      if (r < 0.35) lines.push(`${pad}- ${this.blockScalarToken()}${this.comment()}`);
      else if (r < 0.45) lines.push(`${pad}- ${this.flow(0)}${this.comment()}`);
      else if (r < 0.5) lines.push(`${pad}-${this.comment()}`);
      else if (r < 0.55) lines.push(`${pad}- ${this.pick(['|', '>-'])}`, ...this.blockScalar(indent + this.step()));
      else if (r < 0.75) lines.push(...this.compact(indent, (at) => this.map(at, depth + 1)));
      else if (r < 0.82) lines.push(...this.compact(indent, (at) => this.seq(at, depth + 1)));
      else if (r < 0.91) lines.push(`${pad}-`, ...this.map(indent + this.step(), depth + 1));
      else lines.push(`${pad}-`, ...this.seq(indent + this.step(), depth + 1));
    }
    return lines;
  }

  document(): string {
    const lines: string[] = [];
    if (this.chance(0.2)) lines.push('# leading comment', '');
    if (this.chance(0.15)) lines.push(this.chance(0.7) ? '---' : '--- # start');
    const indent = this.chance(0.1) ? this.int(1, 2) : 0;
    const r = this.rand();
    if (r < 0.6) lines.push(...this.map(indent, 0));
    else if (r < 0.85) lines.push(...this.seq(indent, 0));
    else if (r < 0.95) lines.push(`${' '.repeat(indent)}${this.flow(0)}${this.comment()}`);
    else if (r < 0.98) lines.push(this.blockScalarToken());
    if (this.chance(0.1)) lines.push('# trailing comment');
    let text = lines.join('\n') + (this.chance(0.85) ? '\n' : '');
    if (this.chance(0.1)) text = text.replaceAll('\n', '\r\n');
    return text;
  }

  mutate(text: string): string {
    const at = this.int(0, text.length);
    return text.slice(0, at) + this.pick(MUTATIONS) + text.slice(at);
  }
}

describe('parseYamlFast on random documents', () => {
  it('parseYamlFast - random documents in the subset parse as yaml parses them, most on the fast path', () => {
    const generator = new DocumentGenerator(20260501);
    let fast = 0;
    const total = 3000;
    for (let i = 0; i < total; i += 1) if (differential(generator.document()) === 'fast') fast += 1;
    // Many generated scalars and keys are ones the fast path refuses (012, .inf, @x, duplicates...).
    expect(fast / total).toBeGreaterThan(0.6);
  });

  it('parseYamlFast - randomly damaged documents are refused or parsed as yaml parses them', () => {
    const generator = new DocumentGenerator(7);
    let fast = 0;
    for (let i = 0; i < 3000; i += 1) {
      const text = generator.mutate(generator.document());
      if (differential(text) === 'fast') fast += 1;
    }
    expect(fast).toBeGreaterThan(0); // some damage is harmless (a space, a comment)
  });
});

describe('parseYamlFast on chosen documents', () => {
  const fastCases: Array<[string, string]> = [
    ['an empty document', ''],
    ['only comments and blank lines', '# a\n\n   \n  # b\n'],
    ['a first --- line', '---\na: 1\n'],
    ['a sequence at its key’s indentation', 'a:\n- x\n- y\nb: 2\n'],
    ['compact mappings in a sequence', '- a: 1\n  b: [x, y]\n-   c: 2\n    d:\n      - e\n'],
    ['a compact nested sequence', '- - a\n  - b\n- - c\n'],
    ['nested flow collections', 'a: { b: [1, { c: d }], "e": \'f\', g: [] , h: {} }\n'],
    ['trailing commas in flow collections', 'a: [x, y,]\nb: {c: 1,}\n'],
    ['quoted keys', '"a b": 1\n\'c\': 2\n"": 3\n'],
    ['double-quoted escapes', 'a: "\\" \\\\ \\/ \\n \\t \\r \\0 \\b \\e \\a \\v \\f \\x41 \\u00e9 \\U0001F600"\n'],
    ['single-quoted escapes', "a: 'it''s # not a comment'\n"],
    ['comments after values', 'a: b # c\nd: "e" # f\ng: [h] # i\nj: # k\n  l: m\n'],
    ['plain scalars with indicators inside', 'a: x:y, [z] {w} a#b -c\nb: http://host:80/p?q=1\n'],
    ['numbers, booleans and nulls', 'a: [1, -2, +3, 1.5, -0.25, 1e3, 2.5E-2, 0, -0]\nb: [true, False, NULL, ~, null]\nc:\n'],
    ['__proto__ and other Object.prototype names as keys', '__proto__: 1\nconstructor: 2\ntoString: { __proto__: 3 }\n'],
    ['literal and folded block scalars', 'a: |\n  one\n\n    two\n  three\nb: >-\n  four\n  five\n\n  six\nc: x\n'],
    ['a block scalar in a sequence', '- |-\n  text\n- >\n  more\n  text\n'],
    ['CRLF line breaks', 'a: 1\r\nb:\r\n  - x\r\n  - "y"\r\nc: |\r\n  z\r\n'],
    ['a top-level flow sequence', '[a, b]\n'],
    ['a top-level scalar', 'just text\n'],
    ['an indented top level', '  a: 1\n  b: 2\n'],
    ['integer-like keys', '2: b\n1: a\n-1: c\n1.5: d\n1e3: e\n'],
  ];
  for (const [condition, text] of fastCases) {
    it(`parseYamlFast - takes the fast path for ${condition}`, () => {
      expect(differential(text)).toBe('fast');
    });
  }

  const refused: Array<[string, string]> = [
    ['an anchor', 'a: &x 1\nb: 2\n'],
    ['an alias', 'a: 1\nb: *a\n'],
    ['a tag', 'a: !!str 1\n'],
    ['a local tag', 'a: !thing x\n'],
    ['a complex key', '? a\n: 1\n'],
    ['a directive', '%YAML 1.2\n---\na: 1\n'],
    ['a second document', 'a: 1\n---\nb: 2\n'],
    ['a document end marker', 'a: 1\n...\n'],
    ['a keep-chomping block scalar', 'a: |+\n  x\n\n'],
    ['a block scalar indentation indicator', 'a: |2\n   x\n'],
    ['a folded block scalar with more-indented lines', 'a: >\n  x\n    y\n'],
    ['an empty block scalar', 'a: |\nb: 1\n'],
    ['a top-level block scalar', '|\n  x\n'],
    ['a multi-line plain scalar', 'a: b\n  c\n'],
    ['a multi-line plain scalar in a sequence', '- b\n  c\n'],
    ['a multi-line double-quoted scalar', 'a: "b\n  c"\n'],
    ['a multi-line single-quoted scalar', "a: 'b\n  c'\n"],
    ['a quoted key spanning lines', '"a\n b": 1\n'],
    ['a multi-line flow collection', 'a: [b,\n  c]\n'],
    ['a flow collection as a key', '[a]: 1\n'],
    ['a flow mapping as a key', '{a: 1}: 2\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a duplicate key in a flow mapping', 'a: {b: 1, b: 2}\n'],
    ['keys that are the same string', '1: a\n"1": b\n'],
    ['a merge key', '<<: {a: 1}\n'],
    ['a tab in the indentation', 'a:\n\tb: 1\n'],
    ['a tab after a value', 'a: b\t# c\n'],
    ['@ starting a plain scalar', 'a: @x\n'],
    ['a backtick starting a plain scalar', 'a: `x`\n'],
    ['% starting a plain scalar', 'a: %x\n'],
    ['a block sequence on a key’s line', 'a: - b\n'],
    ['a mapping on a key’s line', 'a: b: c\n'],
    ['an empty key', ': a\n'],
    ['a flow mapping entry without a value', 'a: {b}\n'],
    ['a flow mapping entry with an empty value', 'a: {b: , c: 1}\n'],
    ['an empty flow entry', 'a: [b, , c]\n'],
    ['a single-pair mapping in a flow sequence', 'a: [b: c]\n'],
    ['a colon inside a flow plain scalar', 'a: [b:c]\n'],
    ['a comment inside a flow collection', 'a: [b # c\n  ]\n'],
    ['an unknown double-quoted escape', 'a: "\\q"\n'],
    ['an escaped space', 'a: "\\ "\n'],
    ['a short \\x escape', 'a: "\\x4"\n'],
    ['a code point past U+10FFFF', 'a: "\\U00110000"\n'],
    ['a hexadecimal integer', 'a: 0x1F\n'],
    ['an octal integer', 'a: 0o17\n'],
    ['an infinity', 'a: .inf\n'],
    ['a not-a-number', 'a: .nan\n'],
    ['a leading zero', 'a: 012\n'],
    ['an integer past 2^53', 'a: 9007199254740993\n'],
    ['an underscore in a number', 'a: 1_000\n'],
    ['a sexagesimal number', 'a: 1:30\n'],
    ['a float without digits after the point', 'a: 1.\n'],
    ['a float without digits before the point', 'a: .5\n'],
    ['a key indented more than its siblings', 'a: 1\n  b: 2\n'],
    ['a sequence entry after a mapping', 'a: 1\n- b\n'],
    ['a comment glued to a quoted value', 'a: "b"# c\n'],
    ['text after a flow collection', 'a: [b] c\n'],
    ['a byte order mark', '\uFEFFa: 1\n'],
    ['a lone carriage return', 'a: 1\rb: 2\n'],
    ['a NEL character', 'a: b\u0085c\n'],
    ['a control character', 'a: b\u0007\n'],
    ['a key longer than yaml allows', `${'k'.repeat(1100)}: 1\n`],
    ['deep flow nesting', `a: ${'['.repeat(300)}${']'.repeat(300)}\n`],
  ];
  for (const [condition, text] of refused) {
    it(`parseYamlFast - returns undefined for ${condition}`, () => {
      expect(parseYamlFast(text)).toBeUndefined();
    });
  }
});

describe('parseLocatedYaml with the fast path', () => {
  const text = [
    '# a pipeline',
    'pipeline: p',
    'stages:',
    '  a: { run: "echo x", inputs: [in.txt, "b c"] }',
    '  b:',
    '    run: |',
    '      echo y',
    '    outputs:',
    '      - out/b.txt',
    '',
  ].join('\n');

  it('parseLocatedYaml - a fast-path document still answers spans with lines and columns', () => {
    expect(parseYamlFast(text)).toBeDefined();
    const located = parseLocatedYaml('p.yaml', text);
    expect(located.diagnostics).toEqual([]);
    expect(canonical(located.value)).toBe(canonical(parseLocatedYamlWithLibrary('p.yaml', text).value));
    expect(located.spans.get('/stages/a#key')).toEqual({ file: 'p.yaml', line: 4, column: 3, length: 1 });
    expect(located.spans.get('/stages/a/run')).toEqual({ file: 'p.yaml', line: 4, column: 13, length: 8 });
    expect(located.spans.get('/stages/a/inputs/1')).toEqual({ file: 'p.yaml', line: 4, column: 40, length: 5 });
    expect(located.spans.get('/stages/b/outputs/0')).toEqual({ file: 'p.yaml', line: 9, column: 9, length: 9 });
    expect(located.spans.get('/stages/b/outputs#key')).toEqual({ file: 'p.yaml', line: 8, column: 5, length: 7 });
    expect(located.spans.get('/stages/b/run')).toEqual({ file: 'p.yaml', line: 6, column: 10, length: 1 });
    expect(located.spans.get('/stages/nope')).toBeUndefined();
  });

  it('parseLocatedYaml - spans of CRLF text and of keys ending in #key (left to yaml) match yaml', () => {
    for (const doc of ['a: 1\r\nb:\r\n  - "x"\r\n', 'x: 1\nx#key: 2\n', 'x#key: 2\nx: 1\n', 'a: {x: 1, x#key: [2]}\n']) {
      expect(differential(doc), JSON.stringify(doc)).toBe('fast');
    }
    expect(parseLocatedYaml('c.yaml', 'a: 1\r\nb: "x"\r\n').spans.get('/b')).toEqual({ file: 'c.yaml', line: 2, column: 4, length: 3 });
    expect(parseLocatedYaml('k.yaml', 'x: 1\nx#key: 2\n').spans.get('/x#key')).toEqual({ file: 'k.yaml', line: 2, column: 8, length: 1 });
  });

  it('parseLocatedYaml - a document the fast path refuses still gets located yaml diagnostics', () => {
    const located = parseLocatedYaml('d.yaml', 'a: 1\nb: 2\na: 3\n');
    expect(located.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'duplicate-key',
        message: "YAML: Map keys must be unique; 'a' appears more than once",
        span: { file: 'd.yaml', line: 3, column: 1, length: 1 },
      },
    ]);
  });
});
