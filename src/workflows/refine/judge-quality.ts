/**
 * How far a round's judges agree, and how each one sits against the consensus: the signals that show
 * a harsh judge (a negative mean offset), a lenient one (positive) or an erratic one (a large mean
 * absolute offset with a small mean). Pure functions over the round's verdicts.
 */

/** MassGen's quality server passes a criterion at 7 or more (`DEFAULT_CUTOFF`). */
export const PASS_SCORE = 7;

export interface CriterionAgreement {
  id: string;
  /** Judges that scored this criterion. */
  judges: number;
  min: number;
  max: number;
  /** max - min. */
  spread: number;
  /** Population standard deviation of the scores. */
  stdev: number;
  /** Judges whose score passes (>= 7). */
  passing: number;
  /** Judges on the larger side of pass/fail: how many judges' verdicts on this criterion agree. */
  agree: number;
}

export interface JudgeOffset {
  judge: string;
  /** Criteria compared (scored by both the judge and the consensus). */
  criteria: number;
  /** Mean of (judge score - consensus score): below 0 harsher than the consensus, above 0 more lenient. */
  mean_offset: number;
  /** Mean of |judge score - consensus score|: how far off the judge is either way. */
  mean_abs_offset: number;
}

export interface RoundAgreement {
  /** Judges with a usable verdict this round. */
  judges: number;
  /** Of those, how many gave the round's (consensus) verdict. */
  verdicts_agree: number;
  criteria: CriterionAgreement[];
  offsets: JudgeOffset[];
}

export interface ScoredJudge {
  name: string;
  verdict: 'iterate' | 'converged';
  scores: Readonly<Record<string, number>>;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

function criterionAgreement(id: string, values: readonly number[]): CriterionAgreement {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length;
  const passing = values.filter((v) => v >= PASS_SCORE).length;
  const min = Math.min(...values);
  const max = Math.max(...values);
  return {
    id,
    judges: values.length,
    min,
    max,
    spread: max - min,
    stdev: round2(Math.sqrt(variance)),
    passing,
    agree: Math.max(passing, values.length - passing),
  };
}

function offsetOf(judge: ScoredJudge, consensus: Readonly<Record<string, number>>, ids: readonly string[]): JudgeOffset | undefined {
  const diffs = ids.flatMap((id) =>
    judge.scores[id] !== undefined && consensus[id] !== undefined ? [(judge.scores[id] as number) - (consensus[id] as number)] : [],
  );
  if (diffs.length === 0) return undefined;
  return {
    judge: judge.name,
    criteria: diffs.length,
    mean_offset: round2(diffs.reduce((a, b) => a + b, 0) / diffs.length),
    mean_abs_offset: round2(diffs.reduce((a, b) => a + Math.abs(b), 0) / diffs.length),
  };
}

/**
 * One round: per criterion the spread of the usable judges' scores and how many agree on pass/fail,
 * how many judges gave the consensus verdict, and each judge's offset from the consensus scores (the
 * round's verdict.json). Undefined when no judge was usable.
 */
export function roundAgreement(
  judges: readonly ScoredJudge[],
  consensus: { verdict: 'iterate' | 'converged'; scores: Readonly<Record<string, number>> },
  ids: readonly string[],
): RoundAgreement | undefined {
  if (judges.length === 0) return undefined;
  const criteria = ids.flatMap((id) => {
    const values = judges.flatMap((j) => (j.scores[id] !== undefined ? [j.scores[id] as number] : []));
    return values.length > 0 ? [criterionAgreement(id, values)] : [];
  });
  return {
    judges: judges.length,
    verdicts_agree: judges.filter((j) => j.verdict === consensus.verdict).length,
    criteria,
    offsets: judges.map((j) => offsetOf(j, consensus.scores, ids)).filter((o): o is JudgeOffset => o !== undefined),
  };
}

export interface JudgeStanding {
  judge: string;
  /** Rounds in which the judge had a usable verdict to compare. */
  rounds: number;
  criteria: number;
  mean_offset: number;
  mean_abs_offset: number;
}

/** Each judge over the whole session: its offsets pooled over every criterion of every round (in the order given). */
export function sessionStandings(rounds: ReadonlyArray<RoundAgreement | undefined>, order: readonly string[]): JudgeStanding[] {
  const pooled = new Map<string, { rounds: number; criteria: number; sum: number; abs: number }>();
  for (const round of rounds) {
    for (const o of round?.offsets ?? []) {
      const entry = pooled.get(o.judge) ?? { rounds: 0, criteria: 0, sum: 0, abs: 0 };
      entry.rounds += 1;
      entry.criteria += o.criteria;
      entry.sum += o.mean_offset * o.criteria;
      entry.abs += o.mean_abs_offset * o.criteria;
      pooled.set(o.judge, entry);
    }
  }
  const names = [...order.filter((n) => pooled.has(n)), ...[...pooled.keys()].filter((n) => !order.includes(n)).sort()];
  return names.map((judge) => {
    const e = pooled.get(judge) as { rounds: number; criteria: number; sum: number; abs: number };
    return {
      judge,
      rounds: e.rounds,
      criteria: e.criteria,
      mean_offset: round2(e.sum / e.criteria),
      mean_abs_offset: round2(e.abs / e.criteria),
    };
  });
}
