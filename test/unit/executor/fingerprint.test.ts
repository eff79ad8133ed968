import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintOf, fingerprintParts, stableJson } from '../../../src/engine/executor/fingerprint.ts';
import { explainChange } from '../../../src/engine/executor/explain.ts';
import { paramValues } from '../../../src/engine/executor/param-values.ts';
import { FileHashes } from '../../../src/engine/state/file-hashes.ts';
import { StageState } from '../../../src/engine/state/stage-state.ts';

let dir = '';
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

function tmp(): string {
  dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-fp-'));
  return dir;
}

const OLD = Date.now() / 1000 - 3600;

function write(root: string, rel: string, text: string): void {
  writeFileSync(path.join(root, rel), text);
  utimesSync(path.join(root, rel), OLD, OLD);
}

describe('fingerprints', () => {
  it('stableJson - key order does not change the text', () => {
    expect(stableJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(stableJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }));
  });

  it('fingerprintOf - changes with input content, params, code and what needed stages wrote; not with order', () => {
    const root = tmp();
    write(root, 'a.txt', 'one');
    write(root, 'b.txt', 'two');
    const hashes = new FileHashes(root);
    const base = { codeHash: 'c1', paramsJson: '{"x":1}', inputFiles: ['a.txt', 'b.txt'], needed: { up: 'w1' }, schemaHashes: {} };
    const fp = fingerprintOf(fingerprintParts(base, hashes));
    expect(fingerprintOf(fingerprintParts({ ...base, inputFiles: ['b.txt', 'a.txt'] }, hashes))).toBe(fp);
    expect(fingerprintOf(fingerprintParts({ ...base, paramsJson: '{"x":2}' }, hashes))).not.toBe(fp);
    expect(fingerprintOf(fingerprintParts({ ...base, codeHash: 'c2' }, hashes))).not.toBe(fp);
    expect(fingerprintOf(fingerprintParts({ ...base, needed: { up: 'w2' } }, hashes))).not.toBe(fp);
    write(root, 'a.txt', 'ONE');
    expect(fingerprintOf(fingerprintParts(base, new FileHashes(root)))).not.toBe(fp);
  });

  it('FileHashes - an unchanged stat is not re-read; a content change with a new mtime is', () => {
    const root = tmp();
    write(root, 'f', 'aaaa');
    const first = new FileHashes(root);
    const h1 = first.hash('f');
    first.save();
    // Same size and mtime, other bytes: the stat cache answers without reading (as make would).
    writeFileSync(path.join(root, 'f'), 'bbbb');
    utimesSync(path.join(root, 'f'), OLD, OLD);
    expect(new FileHashes(root).hash('f')).toBe(h1);
    utimesSync(path.join(root, 'f'), OLD + 10, OLD + 10);
    expect(new FileHashes(root).hash('f')).not.toBe(h1);
    expect(statSync(path.join(root, 'f')).size).toBe(4);
  });

  it('explainChange - names what changed', () => {
    const before = { code: 'c', params: 'p', inputs: { 'a.txt': '1', 'gone.txt': '1' }, deps: { up: 'x', old: 'y' }, schemas: {} };
    const record = { stage: 's', fingerprint: 'f', parts: before, outputs: {}, runId: 'r', finishedAt: '', durationMs: 0 };
    expect(explainChange({ ...before, inputs: { 'a.txt': '2', 'new.txt': '1' }, deps: { up: 'z', more: 'w' } }, record)).toEqual([
      'input a.txt changed',
      'input new.txt is new',
      'input gone.txt was removed',
      'output of upstream up changed',
      'it now needs upstream more',
    ]);
    // An upstream no longer needed is no reason: this stage reads nothing of it any more.
    expect(explainChange({ ...before, deps: { up: 'x' } }, record)).toEqual([]);
    expect(explainChange(before, undefined)).toEqual(['it has never run (or its last run did not finish)']);
    // Files a stage that runs first may write again are judged as last read (refinery plan).
    expect(explainChange({ ...before, inputs: { 'a.txt': '2', 'gone.txt': '1' } }, record, 'its command', (p) => p === 'a.txt')).toEqual(
      [],
    );
  });

  it('explainChange - names the param that changed with its old and new value, and hides a secret one', () => {
    const rendered = (model: string, key: string) => ({ with: { model, api_key: key, n: 3 }, command: null, env: {} });
    const before = {
      code: 'c',
      params: 'p1',
      inputs: {},
      deps: {},
      schemas: {},
      values: paramValues(rendered('small', 'k-one-12345'), {}),
    };
    const after = { ...before, params: 'p2', values: paramValues(rendered('large', 'k-two-12345'), {}) };
    const record = { stage: 's', fingerprint: 'f', parts: before, outputs: {}, runId: 'r', finishedAt: '', durationMs: 0 };
    expect(explainChange(after, record)).toEqual([
      'param with.api_key changed (value hidden)',
      'param with.model changed: "small" -> "large"',
    ]);
    expect(JSON.stringify(after.values)).not.toContain('k-two');
    // A record without values (an earlier refinery) still says the params changed.
    const { values: _, ...old } = before;
    expect(explainChange(after, { ...record, parts: old })).toEqual(['its params changed']);
    // A value shaped like a credential is hidden whatever its name; a long one is kept as a hash.
    const shaped = paramValues({ with: { header: 'Bearer abcdefGHIJ12345678', text: 'x'.repeat(300) }, command: null, env: {} }, {});
    expect(shaped['with.header']).toMatch(/^hidden:/);
    expect(shaped['with.text']).toMatch(/^long:/);
    expect(paramValues({ with: null, command: { pieces: ['cat ', ' > ', ''], values: [['a b', 'c'], 'out'] }, env: {} }, {})).toEqual({
      command: '"cat a b c > out"',
    });
  });

  it('StageState - a dropped record stays dropped after reload; a torn last line is ignored', () => {
    const root = tmp();
    const parts = { code: '', params: '', inputs: {}, deps: {}, schemas: {} };
    const state = new StageState(root, 'p');
    state.commit({ stage: 'a', fingerprint: 'fa', parts, outputs: {}, runId: 'r', finishedAt: '', durationMs: 1 });
    state.commit({ stage: 'b', fingerprint: 'fb', parts, outputs: {}, runId: 'r', finishedAt: '', durationMs: 1 });
    state.drop('a');
    writeFileSync(path.join(root, '.refinery/state/p.jsonl'), '{"s":"c","f":"fc","r":{"sta', { flag: 'a' });
    const reloaded = new StageState(root, 'p');
    expect(reloaded.get('a')).toBeUndefined();
    expect(reloaded.get('b')?.fingerprint).toBe('fb');
    expect(reloaded.get('c')).toBeUndefined();
  });
});
