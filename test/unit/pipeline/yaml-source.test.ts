import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { locateYaml, parseLocatedYaml, pointerOf } from '../../../src/engine/pipeline/yaml-source.ts';
import { makeDag, refineryPipeline } from '../../../bench/graph/generate.ts';

// The differential harness: js-yaml gives a pipeline's values and the yaml library its places,
// so the two must read every pipeline file alike (same values, a place for every value and key).

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
      return `{${proto}${Object.keys(record)
        .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
        .join(',')}}`;
    }
    default:
      return `<${typeof value}>`;
  }
}

/** Every value and key of a value, by path. */
function pathsOf(value: unknown, at: Array<string | number> = [], out: Array<{ at: Array<string | number>; key: boolean }> = []) {
  out.push({ at, key: false });
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...at, i], out));
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      out.push({ at: [...at, key], key: true });
      pathsOf(child, [...at, key], out);
    }
  }
  return out;
}

/** The two libraries agree on the text's value, and each value and key of it has a place that holds it. */
function agree(file: string, text: string): void {
  const parsed = parseLocatedYaml(file, text);
  expect(parsed.diagnostics, file).toEqual([]);
  const library = locateYaml(file, text);
  expect(library.diagnostics, `the yaml library finds problems js-yaml accepts in ${file}`).toEqual([]);
  expect(canonical(parsed.value), `values differ in ${file}`).toBe(canonical(library.value));
  const lines = text.split('\n');
  for (const { at, key } of pathsOf(parsed.value)) {
    const span = parsed.spans.get(key ? `${pointerOf(at)}#key` : pointerOf(at));
    if (!span) throw new Error(`no place for ${key ? 'the key' : 'the value'} ${pointerOf(at) || '(root)'} in ${file}`);
    if (!key) continue;
    const name = String(at.at(-1)).split('\n')[0] ?? '';
    const shown = (lines[span.line - 1] ?? '').slice(span.column - 1).replace(/^["']/, '');
    // A key's place starts with its text (after its opening quote, if quoted).
    if (!shown.startsWith(name)) throw new Error(`key ${pointerOf(at)} placed at ${span.line}:${span.column} (${shown}) in ${file}`);
  }
}

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !f.includes(`${path.sep}node_modules${path.sep}`));
}

describe('js-yaml values against the yaml library', () => {
  it("yaml-source - the repo's pipelines, examples and test files read alike in both, every value and key located", () => {
    const files = ['pipelines', 'examples', 'test'].flatMap((d) => yamlFilesUnder(path.join(root, d)));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) agree(path.relative(root, file), readFileSync(file, 'utf8'));
  });

  it('yaml-source - the bench pipelines (run and task forms, 300 stages) read alike in both', () => {
    const dag = makeDag(300);
    for (const kind of ['run', 'task'] as const) agree(`bench-${kind}.yaml`, refineryPipeline(dag, kind));
  });

  it('yaml-source - CRLF line breaks, quoted keys and block scalars read alike and are located', () => {
    agree('crlf.yaml', 'a: 1\r\nb:\r\n  - "x"\r\nc: |\r\n  z\r\n');
    agree('keys.yaml', '"a b": 1\n\'c/d\': { "e~f": [x, y] }\nx#key: 2\n__proto__: 3\n');
    agree('blocks.yaml', 'a: |\n  one\n\n    two\nb: >-\n  four\n  five\n');
    expect(parseLocatedYaml('c.yaml', 'a: 1\r\nb: "x"\r\n').spans.get('/b')).toEqual({ file: 'c.yaml', line: 2, column: 4, length: 3 });
  });
});

describe('parseLocatedYaml', () => {
  afterEach(() => vi.restoreAllMocks());

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

  it('parseLocatedYaml - a file without problems is not located until a span is asked for, then once', () => {
    const yamlLibrary = createRequire(import.meta.url)('yaml') as typeof import('yaml');
    const parseDocument = vi.spyOn(yamlLibrary, 'parseDocument');
    const located = parseLocatedYaml('p.yaml', text);
    expect(located.diagnostics).toEqual([]);
    expect(located.value).toEqual({
      pipeline: 'p',
      stages: { a: { run: 'echo x', inputs: ['in.txt', 'b c'] }, b: { run: 'echo y\n', outputs: ['out/b.txt'] } },
    });
    expect(parseDocument).not.toHaveBeenCalled();
    expect(located.spans.get('/stages/a#key')).toEqual({ file: 'p.yaml', line: 4, column: 3, length: 1 });
    expect(located.spans.get('/stages/a/run')).toEqual({ file: 'p.yaml', line: 4, column: 13, length: 8 });
    expect(located.spans.get('/stages/a/inputs/1')).toEqual({ file: 'p.yaml', line: 4, column: 40, length: 5 });
    expect(located.spans.get('/stages/b/outputs/0')).toEqual({ file: 'p.yaml', line: 9, column: 9, length: 9 });
    expect(located.spans.get('/stages/b/outputs#key')).toEqual({ file: 'p.yaml', line: 8, column: 5, length: 7 });
    expect(located.spans.get('/stages/nope')).toBeUndefined();
    expect(parseDocument).toHaveBeenCalledTimes(1);
  });

  it('parseLocatedYaml - every duplicate key and alias of a refused file is reported, each located', () => {
    const located = parseLocatedYaml('d.yaml', 'a: &x 1\nb: *x\na: 3\nc: [*x, *x]\n');
    expect(located.diagnostics.map((d) => `${d.span?.line}:${d.span?.column} ${d.code} ${d.message}`)).toEqual([
      '2:4 yaml-alias YAML: alias *x: anchors/aliases are not supported in pipeline files; repeat the value',
      "3:1 duplicate-key YAML: Map keys must be unique; 'a' appears more than once",
      '4:5 yaml-alias YAML: alias *x: anchors/aliases are not supported in pipeline files; repeat the value',
      '4:9 yaml-alias YAML: alias *x: anchors/aliases are not supported in pipeline files; repeat the value',
    ]);
  });

  it('parseLocatedYaml - a file only js-yaml refuses gets its reason at its place', () => {
    const located = parseLocatedYaml('t.yaml', 'a: 1\nb: !thing x\n');
    expect(located.diagnostics.filter((d) => d.severity === 'error')).toEqual([
      {
        severity: 'error',
        code: 'yaml-syntax',
        message: 'YAML: unknown scalar tag !<!thing>',
        span: { file: 't.yaml', line: 2, column: 4, length: 1 },
      },
    ]);
  });

  it('parseLocatedYaml - an empty file or one of comments only is null, without a YAML error', () => {
    for (const empty of ['', '# nothing yet\n\n']) {
      const located = parseLocatedYaml('e.yaml', empty);
      expect(located.value).toBeNull();
      expect(located.diagnostics).toEqual([]);
    }
  });

  it('parseLocatedYaml - values follow the YAML 1.2 core schema', () => {
    const located = parseLocatedYaml('s.yaml', 'a: [0x1F, 0o17, 012, 1_000, 1:30, .inf, ~, True, yes, 2001-12-14]\n');
    expect(located.value).toEqual({ a: [31, 15, 12, '1_000', '1:30', Number.POSITIVE_INFINITY, null, true, 'yes', '2001-12-14'] });
  });
});
