// Fingerprints are portable: nothing of the machine or the folder the project is in enters them.
import { describe, expect, it } from 'vitest';
import { fingerprintOf, fingerprintParts, namesFolder } from '../../../src/engine/executor/fingerprint.ts';
import type { FileHashes } from '../../../src/engine/state/file-hashes.ts';
import type { FingerprintParts } from '../../../src/engine/state/stage-state.ts';

const base: FingerprintParts = { code: 'c', params: 'p', inputs: { 'src/a.txt': 'H1' }, deps: {}, schemas: {} };

describe('portable fingerprints', () => {
  it('absolute inputs - the same content at another absolute path gives the same fingerprint', () => {
    const alice = fingerprintOf({ ...base, inputs: { ...base.inputs, '/home/alice/data/x.csv': 'H2', '/etc/hosts': 'H3' } });
    const bob = fingerprintOf({ ...base, inputs: { ...base.inputs, '/home/bob/work/x.csv': 'H2', '/opt/hosts': 'H3' } });
    expect(alice).toBe(bob);
  });

  it('absolute inputs - other content gives another fingerprint', () => {
    expect(fingerprintOf({ ...base, inputs: { ...base.inputs, '/etc/hosts': 'H3' } })).not.toBe(
      fingerprintOf({ ...base, inputs: { ...base.inputs, '/etc/hosts': 'H4' } }),
    );
    expect(fingerprintOf({ ...base, inputs: { ...base.inputs, '/etc/hosts': 'H3' } })).not.toBe(fingerprintOf(base));
  });

  it('project inputs - still keyed by their path relative to the project: a renamed input changes the fingerprint', () => {
    expect(fingerprintOf(base)).not.toBe(fingerprintOf({ ...base, inputs: { 'src/b.txt': 'H1' } }));
  });

  it('params naming the project folder - the result is marked local, with the reason', () => {
    const hashes = { hash: () => 'H' } as unknown as FileHashes;
    const input = { codeHash: 'c', inputFiles: [], needed: {}, schemaHashes: {}, root: '/tmp/clone-a' };
    expect(fingerprintParts({ ...input, paramsJson: '{"with":{"logs":"/tmp/clone-a/logs"}}' }, hashes).local).toContain('absolute path');
    expect(fingerprintParts({ ...input, paramsJson: '{"with":{"logs":"logs"}}' }, hashes).local).toBeUndefined();
    expect(fingerprintParts({ ...input, paramsJson: '{"with":{"logs":"/tmp/clone-ab/logs"}}' }, hashes).local).toBeUndefined();
  });

  it.each([
    ['"/tmp/p"', '/tmp/p', true],
    ['"/tmp/p/x"', '/tmp/p', true],
    ["cat '/tmp/p/x'", '/tmp/p', true],
    ['cd /tmp/p && ls', '/tmp/p', true],
    ['"/tmp/pq"', '/tmp/p', false],
    ['"/tmp/p.old"', '/tmp/p', false],
    ['"/tmp/x"', '/', false],
  ])('namesFolder - %s names %s: %s', (text, folder, expected) => {
    expect(namesFolder(text, folder)).toBe(expected);
  });
});
