// The one place the benchmark touches the analyzer library (src/massgen, written separately).
import { analyzeTurnUnit } from '../../src/workflows/massgen/analyze.ts';
import { resolveTurnUnit } from '../../src/workflows/massgen/discover.ts';

/** Analyzes the turn dir and returns a few figures, so the work cannot be skipped. */
export async function analyzeTurn(turnDir: string): Promise<Record<string, unknown>> {
  const resolved = await resolveTurnUnit(turnDir);
  if (!resolved.ok) throw new Error(`analyze: ${resolved.reason}`);
  const { analysis, report } = await analyzeTurnUnit(resolved.unit, { nowMs: 0 });
  return { winner: analysis.winner.agentId, answers: analysis.answers.length, votes: analysis.votes.length, reportChars: report.length };
}
