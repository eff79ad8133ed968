import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fingerprintOf, fingerprintParts, stableJson } from '../../../src/engine/executor/fingerprint.ts';
import { explainChange } from '../../../src/engine/executor/explain.ts';
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

  it('fingerprintOf - changes with input content, params, code and deps; not with order', () => {
    const root = tmp();
    write(root, 'a.txt', 'one');
    write(root, 'b.txt', 'two');
    const hashes = new FileHashes(root);
    const base = { codeHash: 'c1', paramsJson: '{"x":1}', inputFiles: ['a.txt', 'b.txt'], depFingerprints: { up: 'f1' }, schemaHashes: {} };
    const fp = fingerprintOf(fingerprintParts(base, hashes));
    expect(fingerprintOf(fingerprintParts({ ...base, inputFiles: ['b.txt', 'a.txt'] }, hashes))).toBe(fp);
    expect(fingerprintOf(fingerprintParts({ ...base, paramsJson: '{"x":2}' }, hashes))).not.toBe(fp);
    expect(fingerprintOf(fingerprintParts({ ...base, codeHash: 'c2' }, hashes))).not.toBe(fp);
    expect(fingerprintOf(fingerprintParts({ ...base, depFingerprints: { up: 'f2' } }, hashes))).not.toBe(fp);
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
    const before = { code: 'c', params: 'p', inputs: { 'a.txt': '1', 'gone.txt': '1' }, deps: { up: 'x' }, schemas: {} };
    const record = { stage: 's', fingerprint: 'f', parts: before, outputs: {}, runId: 'r', finishedAt: '', durationMs: 0 };
    expect(explainChange({ ...before, inputs: { 'a.txt': '2', 'new.txt': '1' }, deps: { up: 'y' } }, record)).toEqual([
      'input a.txt changed',
      'input new.txt is new',
      'input gone.txt was removed',
      'upstream up changed',
    ]);
    expect(explainChange(before, undefined)).toEqual(['it has never run (or its last run did not finish)']);
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
