import { describe, expect, it } from 'vitest';
import { ChangeLedger } from '../../../src/engine/watch/change-ledger.ts';

const everything = (): boolean => true;

function readyLedger(covers: (rel: string) => boolean = everything, floodLimit?: number): ChangeLedger {
  const ledger = new ChangeLedger(covers, floodLimit);
  ledger.ready();
  return ledger;
}

describe('ChangeLedger', () => {
  it('ChangeLedger - before the first scan is done nothing is vouched for', () => {
    const ledger = new ChangeLedger(everything);
    expect(ledger.unchangedSince('src/a.txt', 0)).toBe(false);
    expect(ledger.changedSince(0)).toBeUndefined();
  });

  it('ChangeLedger - a path seen after the epoch is changed; before it, or another path, is not', () => {
    const ledger = readyLedger();
    ledger.saw(['src/a.txt']);
    const epoch = ledger.epochTaken();
    expect(ledger.unchangedSince('src/a.txt', epoch)).toBe(true);
    ledger.saw(['src/b.txt']);
    expect(ledger.unchangedSince('src/b.txt', epoch)).toBe(false);
    expect(ledger.unchangedSince('src/a.txt', epoch)).toBe(true);
    expect([...(ledger.changedSince(epoch) ?? [])]).toEqual(['src/b.txt']);
  });

  it('ChangeLedger - a folder seen changing puts every path under it in doubt', () => {
    const ledger = readyLedger();
    const epoch = ledger.epochTaken();
    ledger.saw(['data']);
    expect(ledger.unchangedSince('data/x/y.txt', epoch)).toBe(false);
    expect(ledger.unchangedSince('other/y.txt', epoch)).toBe(true);
  });

  it('ChangeLedger - a folder created after the first scan is vouched for only from when it was watched', () => {
    const ledger = readyLedger();
    ledger.saw(['new']);
    const before = ledger.epochTaken();
    expect(ledger.watches('new/a.txt', before)).toBe(false);
    ledger.attached('new');
    const after = ledger.epochTaken();
    expect(ledger.watches('new/a.txt', after)).toBe(true);
    expect(ledger.unchangedSince('new/a.txt', after)).toBe(true);
    ledger.detached('new');
    expect(ledger.unchangedSince('new/a.txt', after)).toBe(false);
  });

  it('ChangeLedger - a path the watcher does not cover is never vouched for', () => {
    const ledger = readyLedger((rel) => rel.startsWith('src/'));
    const epoch = ledger.epochTaken();
    expect(ledger.unchangedSince('src/a.txt', epoch)).toBe(true);
    expect(ledger.unchangedSince('elsewhere/a.txt', epoch)).toBe(false);
    expect(ledger.unchangedSince('/etc/hosts', epoch)).toBe(false);
    expect(ledger.unchangedSince('../outside.txt', epoch)).toBe(false);
  });

  it('ChangeLedger - a flood of notifications (the kernel queue may have dropped some) ends the trust in earlier epochs', () => {
    const ledger = readyLedger(everything, 10);
    const epoch = ledger.epochTaken();
    for (let i = 0; i < 10; i += 1) ledger.saw([`src/${i}.txt`]);
    expect(ledger.unchangedSince('src/other.txt', epoch)).toBe(false);
    expect(ledger.changedSince(epoch)).toBeUndefined();
    const later = ledger.epochTaken();
    expect(ledger.unchangedSince('src/other.txt', later)).toBe(true);
  });

  it('ChangeLedger - a notification naming the root itself (or nothing) ends the trust in earlier epochs', () => {
    const ledger = readyLedger();
    const epoch = ledger.epochTaken();
    ledger.saw([]);
    expect(ledger.unchangedSince('src/a.txt', epoch)).toBe(false);
  });
});
