import { describe, expect, it } from 'vitest';
import { Leases } from '../../../src/engine/dispatch/leases.ts';

const settings = { leaseMs: 1000, takeMs: 5000, resendMs: 500 };

describe('leases', () => {
  it('leases - an untaken job is sent again every resendMs, then is due as untaken at takeMs', () => {
    const l = new Leases(settings);
    l.send('a', 0);
    expect(l.due(400)).toEqual([]);
    expect(l.due(500)).toEqual([{ job: 'a', kind: 'resend' }]);
    expect(l.due(700)).toEqual([]);
    expect(l.due(1000)).toEqual([{ job: 'a', kind: 'resend' }]);
    expect(l.due(5000)).toEqual([{ job: 'a', kind: 'untaken', waitedMs: 5000 }]);
  });

  it('leases - a taken job lives while a worker beats within the lease, and lapses when it goes silent', () => {
    const l = new Leases(settings);
    l.send('a', 0);
    l.took('a', 'w1', 100);
    l.beat('w1', ['a'], 900);
    expect(l.due(1800)).toEqual([]);
    expect(l.due(1900)).toEqual([{ job: 'a', kind: 'lapsed', workers: ['w1'], silentMs: 1000 }]);
  });

  it('leases - sending again makes a new attempt, untaken', () => {
    const l = new Leases(settings);
    expect(l.send('a', 0)).toBe(1);
    l.took('a', 'w1', 10);
    expect(l.send('a', 2000)).toBe(2);
    expect(l.takers('a')).toEqual([]);
  });

  it('leases - resuming after the broker was away restarts every clock', () => {
    const l = new Leases(settings);
    l.send('a', 0);
    l.took('a', 'w1', 0);
    l.send('b', 0);
    l.resume(10_000);
    expect(l.due(10_400)).toEqual([]);
    expect(
      l
        .due(11_000)
        .map((d) => d.kind)
        .sort(),
    ).toEqual(['lapsed', 'resend']);
  });

  it('leases - a settled job is never due', () => {
    const l = new Leases(settings);
    l.send('a', 0);
    l.settle('a');
    expect(l.due(100_000)).toEqual([]);
  });
});
