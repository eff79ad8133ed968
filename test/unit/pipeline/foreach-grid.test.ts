import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { evaluate, ExprEvalError } from '../../../src/engine/expr/evaluate.ts';
import { parseExpr } from '../../../src/engine/expr/parse.ts';
import { foreachEffects } from '../../../src/engine/pipeline/foreach-files.ts';

const ev = (text: string, effects = {}) => evaluate(parseExpr(text), { vars: { params: { repeat: 2 } }, effects });

const dirs: string[] = [];
function project(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'refinery-grid-'));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return root;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('foreach grid functions', () => {
  it('range - counts from 0, or from a to b-1', () => {
    expect(ev('range(3)')).toEqual([0, 1, 2]);
    expect(ev('range(1, params.repeat + 1)')).toEqual([1, 2]);
    expect(ev('range(0)')).toEqual([]);
  });

  it('product - every combination, the first list slowest', () => {
    expect(ev("product(['a', 'b'], ['x'], range(1, 3))")).toEqual([
      ['a', 'x', 1],
      ['a', 'x', 2],
      ['b', 'x', 1],
      ['b', 'x', 2],
    ]);
  });

  it('product - too many combinations is an error, not a hang', () => {
    expect(() => ev('product(range(1000), range(1000))')).toThrow(/limit/);
  });

  it('hash - short, stable, different per text', () => {
    expect(ev("hash('What is 2+2?')")).toMatch(/^[0-9a-f]{8}$/);
    expect(ev("hash('a')")).toBe(ev("hash('a')"));
    expect(ev("hash('a')")).not.toBe(ev("hash('b')"));
  });

  it('lines - non-empty trimmed lines of a file in the project', () => {
    const root = project({ 'q.txt': 'What is 2+2?\n\n  Why is the sky blue?  \r\n' });
    expect(ev("lines('q.txt')", foreachEffects(root, {}))).toEqual(['What is 2+2?', 'Why is the sky blue?']);
  });

  it('lines - a missing file or one out of the project is an error naming it', () => {
    const root = project({});
    expect(() => ev("lines('nope.txt')", foreachEffects(root, {}))).toThrow(/lines\('nope.txt'\): no such file/);
    expect(() => ev("lines('../../etc/passwd')", foreachEffects(root, {}))).toThrow(ExprEvalError);
  });

  it('glob - a comma list of paths and globs, paths with spaces kept', () => {
    const root = project({ 'configs/a.yaml': '', 'configs/b.yaml': '', 'my configs/c d.yaml': '' });
    const effects = foreachEffects(root, {});
    expect(ev("glob(split('configs/*.yaml,my configs/c d.yaml', ','))", effects)).toEqual([
      'configs/a.yaml',
      'configs/b.yaml',
      'my configs/c d.yaml',
    ]);
  });

  it('glob - a path that is not there, or a glob matching nothing, is an error naming it', () => {
    const root = project({ 'configs/a.yaml': '' });
    const effects = foreachEffects(root, {});
    expect(() => ev("glob('configs/z.yaml')", effects)).toThrow(/'configs\/z.yaml' is not a file/);
    expect(() => ev("glob('other/*.yaml')", effects)).toThrow(/'other\/\*.yaml' matches no file/);
  });

  it('lines and glob - refused outside a foreach list', () => {
    expect(() => ev("lines('q.txt')")).toThrow(/only in a foreach list/);
    expect(() => ev("glob('*.yaml')")).toThrow(/only in a foreach list/);
  });
});
