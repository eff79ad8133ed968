// Time sources differ (spec §7): epoch floats (status, coordination events, vote unix_timestamp) and
// naive local strings (events.jsonl, metadata, snapshot dir names). A Clock converts both to epoch
// seconds, learning the local-time offset from a pair that records both (a vote.json, or metadata vs status).
import type { RunData } from './model.ts';

export interface Clock {
  /** Local minus UTC, in ms, rounded to 15 minutes; 0 when no pair was found. */
  tzOffsetMs: number;
  tzKnown: boolean;
  /** Epoch seconds of the turn's start (first attempt), or null. */
  startEpoch: number | null;
}

const NAIVE_ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;
const NAIVE_DIR = /^(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})(?:_(\d{1,6}))?$/;

/** A naive local timestamp read as if it were UTC, in ms. */
export function naiveMs(text: string | null): number | null {
  if (!text) return null;
  const m = NAIVE_ISO.exec(text.trim()) ?? NAIVE_DIR.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const frac = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) + frac;
  return Number.isFinite(ms) ? ms : null;
}

export function epochOfNaive(clock: Clock, text: string | null): number | null {
  const ms = naiveMs(text);
  return ms === null ? null : (ms - clock.tzOffsetMs) / 1000;
}

export function relative(clock: Clock, epoch: number | null): number | null {
  if (epoch === null || clock.startEpoch === null) return null;
  return Math.round((epoch - clock.startEpoch) * 1000) / 1000;
}

export function isoOfEpoch(epoch: number | null): string | null {
  if (epoch === null) return null;
  const date = new Date(epoch * 1000);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** Epoch start of one run: the writer's own start time first, then the earliest recorded instant. */
export function runStartEpoch(run: RunData, tzOffsetMs: number): number | null {
  const candidates = [
    run.status?.startTime ?? null,
    run.coordination?.startTime ?? null,
    run.coordination?.events.find((e) => e.timestamp !== null)?.timestamp ?? null,
  ];
  const direct = candidates.find((c) => c !== null && c > 0);
  if (direct !== undefined && direct !== null) return direct;
  const naive = naiveMs(run.events?.firstTimestamp ?? null) ?? naiveMs(run.metadata?.timestamp ?? null);
  if (naive !== null) return (naive - tzOffsetMs) / 1000;
  const rounds = [...(run.metrics?.agents ?? []).flatMap((a) => a.rounds), ...(run.status?.agents ?? []).flatMap((a) => a.rounds)];
  const starts = rounds.map((r) => r.startTime).filter((t): t is number => t !== null);
  if (starts.length > 0) return Math.min(...starts);
  const snap = run.snapshots[0];
  return snap ? ((naiveMs(snap.timestamp) ?? 0) - tzOffsetMs) / 1000 || null : null;
}

export function buildClock(runs: RunData[]): Clock {
  let tzOffsetMs = 0;
  let tzKnown = false;
  outer: for (const run of runs) {
    for (const snap of run.snapshots) {
      const local = naiveMs(snap.timestamp);
      if (snap.vote?.unixTimestamp && local !== null) {
        tzOffsetMs = roundOffset(local - snap.vote.unixTimestamp * 1000);
        tzKnown = true;
        break outer;
      }
    }
    const local = naiveMs(run.metadata?.timestamp ?? null);
    const start = run.status?.startTime ?? run.coordination?.startTime ?? null;
    if (local !== null && start !== null) {
      tzOffsetMs = roundOffset(local - start * 1000);
      tzKnown = true;
      break;
    }
  }
  const starts = runs.map((r) => runStartEpoch(r, tzOffsetMs)).filter((s): s is number => s !== null);
  return { tzOffsetMs, tzKnown, startEpoch: starts.length > 0 ? Math.min(...starts) : null };
}

function roundOffset(ms: number): number {
  const quarter = 15 * 60 * 1000;
  return Math.round(ms / quarter) * quarter;
}
