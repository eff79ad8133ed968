import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeLedger } from '../../../src/engine/watch/change-ledger.ts';
import { RecordTrust } from '../../../src/engine/watch/record-trust.ts';
import { Observations } from '../../../src/engine/state/observations.ts';
import { buildNoopRecord, manifestFile, writeNoopRecord } from '../../../src/engine/state/run-manifest.ts';

let root: string | undefined;

afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** A project with src/a.txt, src/b.txt, data/c.txt, a link to a.txt, and a written no-op record of all four. */
function setUp(): { root: string; record: string; ledger: ChangeLedger; trust: RecordTrust; epoch: number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-trust-'));
  root = dir;
  for (const rel of ['src/a.txt', 'src/b.txt', 'data/c.txt']) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), rel);
  }
  symlinkSync(path.join(dir, 'src/a.txt'), path.join(dir, 'src/link.txt'));
  // Stats taken well after the files were written: settled.
  const seen = new Observations(Date.now() + 60_000);
  for (const rel of ['src/a.txt', 'src/b.txt', 'data/c.txt', 'src/link.txt']) {
    const st = statSync(path.join(dir, rel));
    seen.file(rel, [st.size, st.mtimeMs, st.ino]);
  }
  const pipelineFile = path.join(dir, 'pipelines', 'p.yaml');
  const record = buildNoopRecord('k', 'p', ['a'], seen, new Map());
  expect(writeNoopRecord(dir, pipelineFile, record)).toBeUndefined();
  const ledger = new ChangeLedger(() => true);
  ledger.ready();
  const trust = new RecordTrust(dir, ledger);
  const epoch = ledger.epochTaken();
  trust.recordHolds(manifestFile(dir, pipelineFile), epoch, { kind: 'written', record, observed: undefined });
  return { root: dir, record: manifestFile(dir, pipelineFile), ledger, trust, epoch };
}

/** The recorded paths the trust says must be stat'ed. */
function inDoubt(trust: RecordTrust, record: string): string[] | undefined {
  const vouch = trust.vouch(record);
  if (!vouch) return undefined;
  return [...vouch.mayHaveChanged].map((i) => vouch.record.paths[i] as string).sort();
}

/** The trust sorts a record after the answer, off the request's path: one turn of the event loop. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('RecordTrust', () => {
  it('RecordTrust - with nothing seen changing, only the symbolic link is stat’ed (the watcher sees the link, not its target)', async () => {
    const { trust, record } = setUp();
    await settled();
    expect(inDoubt(trust, record)).toEqual(['src/link.txt']);
  });

  it('RecordTrust - a file seen changing is in doubt; a folder seen changing puts everything under it in doubt', async () => {
    const { trust, record, ledger } = setUp();
    await settled();
    ledger.saw(['src/b.txt']);
    expect(inDoubt(trust, record)).toEqual(['src/b.txt', 'src/link.txt']);
    ledger.saw(['data']);
    expect(inDoubt(trust, record)).toEqual(['data/c.txt', 'src/b.txt', 'src/link.txt']);
  });

  it('RecordTrust - a record rewritten by someone else is not vouched for', async () => {
    const { trust, record } = setUp();
    await settled();
    expect(inDoubt(trust, record)).toBeDefined();
    writeFileSync(record, 'damaged');
    expect(inDoubt(trust, record)).toBeUndefined();
  });

  it('RecordTrust - a flood of notifications after the record held ends the vouching', async () => {
    const dir = setUp();
    await settled();
    for (let i = 0; i < 8192; i += 1) dir.ledger.saw([`tmp/${i}`]);
    expect(inDoubt(dir.trust, dir.record)).toBeUndefined();
  });

  it('RecordTrust - found unchanged again at a later epoch, it vouches from then on (what changed before is no longer in doubt)', async () => {
    const { trust, record, ledger } = setUp();
    await settled();
    ledger.saw(['src/b.txt']);
    expect(inDoubt(trust, record)).toEqual(['src/b.txt', 'src/link.txt']);
    trust.recordHolds(record, ledger.epochTaken(), { kind: 'confirmed' });
    expect(inDoubt(trust, record)).toEqual(['src/link.txt']);
  });
});
