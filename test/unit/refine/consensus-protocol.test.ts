import { describe, expect, it } from 'vitest';
import { runConsensus, type ProtocolOptions } from '../../../src/workflows/refine/consensus/protocol.ts';
import type { JudgeAction, JudgeSeat, RoundView } from '../../../src/workflows/refine/consensus/types.ts';

const seats = (...names: string[]): JudgeSeat[] => names.map((name, index) => ({ name, backend: name, index }));

type Script = Record<string, Array<JudgeAction<string> | 'hang'>>;

/** Judges that follow a script, one action per time they are asked; records what each saw. */
function scripted(script: Script) {
  const seen: Array<{ judge: string; round: number; answers: string[] }> = [];
  const calls: Record<string, number> = {};
  const ask = (judge: JudgeSeat, view: RoundView<string>, signal: AbortSignal): Promise<JudgeAction<string>> => {
    seen.push({ judge: judge.name, round: view.round, answers: view.answers.map((a) => `${a.judge}@${a.step}`) });
    const n = calls[judge.name] ?? 0;
    calls[judge.name] = n + 1;
    const action = script[judge.name]?.[n];
    if (action === undefined) throw new Error(`judge ${judge.name} asked more often than scripted (${n + 1})`);
    if (action === 'hang') return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    return Promise.resolve(action);
  };
  return { ask, seen, calls };
}

const vote = (target: string, reason = 'best'): JudgeAction<string> => ({ kind: 'vote', target, reason });
const answer = (text: string): JudgeAction<string> => ({ kind: 'answer', answer: text });

function options(
  judges: JudgeSeat[],
  initial: Record<string, string>,
  ask: ProtocolOptions<string>['ask'],
  extra: Partial<ProtocolOptions<string>> = {},
): ProtocolOptions<string> {
  return { judges, initial: new Map(Object.entries(initial)), maxRounds: 3, ask, signal: new AbortController().signal, ...extra };
}

describe('runConsensus', () => {
  it('runConsensus - judges that answer anew every round: forced, decided by the first answer, whose latest answer is used and every answer is kept', async () => {
    const { ask } = scripted({ a: [answer('A2'), answer('A3')], b: [answer('B2'), answer('B3')] });
    const out = await runConsensus(options(seats('a', 'b'), { a: 'A1', b: 'B1' }, ask));
    expect(out).toMatchObject({ winner: 'a', forced: true, forcedReason: 'max_rounds', decidedBy: 'first_answer', tally: {}, votes: [] });
    expect(out.winnerAnswer).toMatchObject({ judge: 'a', round: 3, step: 3, answer: 'A3' });
    expect(out.answers.map((a) => `${a.judge}@${a.round}:${a.answer}`)).toEqual([
      'a@1:A1',
      'b@1:B1',
      'a@2:A2',
      'b@2:B2',
      'a@3:A3',
      'b@3:B3',
    ]);
  });

  it('runConsensus - unanimous fresh votes in round 2 win without forcing', async () => {
    const { ask, seen } = scripted({ a: [vote('b')], b: [vote('b')], c: [vote('b')] });
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask));
    expect(out.winner).toBe('b');
    expect(out.forced).toBe(false);
    expect(out.winnerAnswer?.answer).toBe('B1');
    expect(out.votes.map((v) => v.voter).sort()).toEqual(['a', 'b', 'c']);
    expect(out.staleVotes).toEqual([]);
    expect(seen.every((s) => s.answers.length === 3)).toBe(true);
  });

  it('runConsensus - a majority of 2 of 3 fresh votes wins', async () => {
    const { ask } = scripted({ a: [vote('a')], b: [vote('a')], c: [vote('c')] });
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask));
    expect(out.winner).toBe('a');
    expect(out.tally).toEqual({ a: 2, c: 1 });
    expect(out.forced).toBe(false);
    expect(out.decidedBy).toBe('majority');
  });

  it('runConsensus - a new answer makes the votes cast beside it stale, and stale voters are relaunched', async () => {
    const { ask, seen } = scripted({
      a: [vote('b'), vote('c')],
      b: [vote('b'), vote('c')],
      c: [answer('C2'), vote('c')],
    });
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask));
    expect(out.rounds[1]?.votes).toEqual([
      { voter: 'a', target: 'b', reason: 'best', fresh: false },
      { voter: 'b', target: 'b', reason: 'best', fresh: false },
    ]);
    expect(out.rounds[1]?.answers).toEqual(['c']);
    expect(out.rounds[2]?.launched).toEqual(['a', 'b', 'c']);
    expect(seen.filter((s) => s.round === 3).every((s) => s.answers.includes('c@2'))).toBe(true);
    expect(out.winner).toBe('c');
    expect(out.winnerAnswer?.answer).toBe('C2');
    expect(out.forced).toBe(false);
  });

  it('runConsensus - a vote is stale against the launch snapshot even if the voter finished after the new answer', async () => {
    // b answers anew in the same round while a and c vote; their snapshots predate b@2.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let askedRound2 = 0;
    const ask = async (judge: JudgeSeat, view: RoundView<string>): Promise<JudgeAction<string>> => {
      if (view.round === 2) {
        askedRound2++;
        if (judge.name === 'b') {
          release();
          return answer('B2');
        }
        await gate;
        return vote('b');
      }
      return vote('b');
    };
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask, { maxRounds: 2 }));
    expect(askedRound2).toBe(3);
    expect(out.staleVotes.map((v) => v.voter).sort()).toEqual(['a', 'c']);
    expect(out.votes).toEqual([]);
    expect(out.forced).toBe(true);
    expect(out.forcedReason).toBe('max_rounds');
    expect(out.winner).toBe('a'); // no fresh votes: the first answer (round 1, registration order)
  });

  it('runConsensus - split fresh votes relaunch everyone and, after max rounds, a plurality tie goes to registration order', async () => {
    const { ask, calls } = scripted({
      a: [vote('c'), vote('c')],
      b: [vote('b'), vote('b')],
      c: [vote('a'), vote('a')],
      d: [vote('b'), vote('c')],
    });
    const out = await runConsensus(options(seats('a', 'b', 'c', 'd'), { a: 'A1', b: 'B1', c: 'C1', d: 'D1' }, ask));
    expect(calls).toEqual({ a: 2, b: 2, c: 2, d: 2 });
    expect(out.rounds[2]?.launched).toEqual(['a', 'b', 'c', 'd']);
    expect(out.forced).toBe(true);
    expect(out.forcedReason).toBe('max_rounds');
    // final tally: c=2 (a, d), b=1, a=1
    expect(out.tally).toEqual({ c: 2, b: 1, a: 1 });
    expect(out.winner).toBe('c');
    expect(out.decidedBy).toBe('plurality');
  });

  it('runConsensus - a forced tie is broken by registration order, not by name', async () => {
    const judges: JudgeSeat[] = [
      { name: 'zeta', backend: 'zeta', index: 0 },
      { name: 'alpha', backend: 'alpha', index: 1 },
    ];
    const { ask } = scripted({ zeta: [vote('alpha')], alpha: [vote('zeta')] });
    const out = await runConsensus(options(judges, { zeta: 'Z', alpha: 'A' }, ask, { maxRounds: 2 }));
    expect(out.tally).toEqual({ alpha: 1, zeta: 1 });
    expect(out.forced).toBe(true);
    expect(out.winner).toBe('zeta');
  });

  it('runConsensus - no votes at all: the first answer wins, forced', async () => {
    const { ask } = scripted({
      a: [
        { kind: 'none', why: 'degraded', detail: 'garbage' },
        { kind: 'none', why: 'degraded', detail: 'garbage' },
      ],
      b: [
        { kind: 'none', why: 'degraded', detail: 'garbage' },
        { kind: 'none', why: 'degraded', detail: 'garbage' },
      ],
    });
    const out = await runConsensus(options(seats('a', 'b'), { b: 'B1' }, ask));
    expect(out.winner).toBe('b');
    expect(out.forced).toBe(true);
    expect(out.decidedBy).toBe('first_answer');
    expect(out.votes).toEqual([]);
    expect(out.rounds[1]?.idle.map((i) => i.judge)).toEqual(['a', 'b']);
  });

  it('runConsensus - a judge that times out is idle for the round and the others still reach a majority', async () => {
    const { ask } = scripted({ a: [vote('a')], b: ['hang'], c: [vote('a')] });
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask, { roundTimeoutMs: 50 }));
    expect(out.winner).toBe('a');
    expect(out.forced).toBe(false);
    expect(out.rounds[1]?.idle).toEqual([{ judge: 'b', why: 'timeout', detail: 'no vote or answer within 50 ms' }]);
  });

  it('runConsensus - the overall deadline forces consensus with the votes so far', async () => {
    const { ask } = scripted({ a: [vote('b')], b: ['hang'], c: ['hang'] });
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask, { deadline: Date.now() + 80 }));
    expect(out.forced).toBe(true);
    expect(out.forcedReason).toBe('timeout');
    expect(out.winner).toBe('b');
    expect(out.rounds).toHaveLength(2);
  });

  it('runConsensus - an exhausted budget forces consensus before a round starts', async () => {
    const { ask, calls } = scripted({});
    const out = await runConsensus(options(seats('a', 'b'), { a: 'A1', b: 'B1' }, ask, { budgetExhausted: () => true }));
    expect(calls).toEqual({});
    expect(out.forced).toBe(true);
    expect(out.forcedReason).toBe('budget');
    expect(out.winner).toBe('a');
  });

  it('runConsensus - a single judge wins with its own answer and no rounds', async () => {
    const { ask, calls } = scripted({});
    const out = await runConsensus(options(seats('solo'), { solo: 'S1' }, ask));
    expect(out.winner).toBe('solo');
    expect(out.forced).toBe(false);
    expect(calls).toEqual({});
  });

  it('runConsensus - no answers at all: no winner, forced as no_answers', async () => {
    const { ask } = scripted({});
    const out = await runConsensus(options(seats('a', 'b'), {}, ask));
    expect(out.winner).toBeUndefined();
    expect(out.forcedReason).toBe('no_answers');
  });

  it('runConsensus - judges with a fresh vote are not relaunched while others still owe an action', async () => {
    const { ask, calls } = scripted({
      a: [vote('c')],
      b: [{ kind: 'none', why: 'degraded', detail: 'bad json' }, vote('c')],
      c: [{ kind: 'none', why: 'degraded', detail: 'bad json' }, vote('a')],
    });
    const out = await runConsensus(options(seats('a', 'b', 'c'), { a: 'A1', b: 'B1', c: 'C1' }, ask));
    expect(out.rounds[2]?.launched).toEqual(['b', 'c']);
    expect(calls.a).toBe(1);
    expect(out.winner).toBe('c');
    expect(out.tally).toEqual({ c: 2, a: 1 });
  });
});
