import { describe, expect, it } from 'vitest';
import { f, pyFloatRepr, pyJsonIndent, pyJsonLine } from '../../../dev/massgen-gen/py-json.ts';
import { pyYamlDump } from '../../../dev/massgen-gen/py-yaml.ts';

describe('py-json', () => {
  it('pyFloatRepr - matches Python repr for whole, tiny, large and epoch floats', () => {
    const cases: [number, string][] = [
      [0, '0.0'],
      [1, '1.0'],
      [100, '100.0'],
      [0.1, '0.1'],
      [0.00012, '0.00012'],
      [0.00001, '1e-05'],
      [5e-6, '5e-06'],
      [2.5e-7, '2.5e-07'],
      [1e16, '1e+16'],
      [1796021299.7752962, '1796021299.7752962'],
      [-1.5, '-1.5'],
    ];
    for (const [value, repr] of cases) expect(pyFloatRepr(value)).toBe(repr);
  });

  it('pyJsonIndent - writes json.dump(indent=2) layout with ASCII escapes and empty containers', () => {
    expect(pyJsonIndent({ a: 1, b: f(2), c: [], d: {}, e: ['x'], s: 'é — 🧠' })).toBe(
      '{\n  "a": 1,\n  "b": 2.0,\n  "c": [],\n  "d": {},\n  "e": [\n    "x"\n  ],\n  "s": "\\u00e9 \\u2014 \\ud83e\\udde0"\n}',
    );
  });

  it('pyJsonLine - writes json.dumps(ensure_ascii=False) separators and keeps unicode', () => {
    expect(pyJsonLine({ a: [1, null, true], b: { c: '❌ x' } })).toBe('{"a": [1, null, true], "b": {"c": "❌ x"}}');
  });

  it('pyJsonIndent - rejects a non-integer plain number (floats must be marked)', () => {
    expect(() => pyJsonIndent({ x: 1.5 })).toThrow(/wrap floats with f\(\)/);
  });

  it('pyYamlDump - quotes timestamp-like strings and lists maps PyYAML style', () => {
    expect(pyYamlDump({ ts: '2026-12-01T09:00:00.1', list: [{ id: 'a', n: 1 }], flag: false, none: null })).toBe(
      "ts: '2026-12-01T09:00:00.1'\nlist:\n- id: a\n  n: 1\nflag: false\nnone: null\n",
    );
  });
});
