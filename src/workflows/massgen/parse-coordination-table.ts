// coordination_table.txt (spec §2.9) is human-oriented; only its TOTALS row is read, as a cross-check
// for legacy logs whose coordination_events.json is missing.
import type { CoordinationTableSummary } from './model.ts';

export function parseCoordinationTable(text: string): CoordinationTableSummary | null {
  const totals = /\|\s*TOTALS\s*\|([^\n|]*)\|/.exec(text)?.[1];
  if (!totals) return null;
  const pick = (word: string): number | null => {
    const m = new RegExp(`(\\d+)\\s+${word}`).exec(totals);
    return m ? Number(m[1]) : null;
  };
  return { answers: pick('answers?'), votes: pick('votes?'), restarts: pick('restarts?') };
}
