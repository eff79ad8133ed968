// Time in integer microseconds since the Unix epoch, rendered the ways MassGen writes time.
// Local time is taken to be UTC (as on the machine that produced the real fixtures).
import { PyFloat } from './py-json.ts';

export type Micros = number;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function parts(us: Micros): { date: Date; micros: number } {
  const ms = Math.floor(us / 1000);
  return { date: new Date(ms), micros: us % 1_000_000 };
}

/** time.time() as a Python float. */
export const epochFloat = (us: Micros): PyFloat => new PyFloat(us / 1e6);

/** datetime.now().strftime("%Y%m%d_%H%M%S_%f") */
export function snapshotStamp(us: Micros): string {
  const { date: d, micros } = parts(us);
  return `${d.getUTCFullYear()}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}_${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}_${pad(micros, 6)}`;
}

/** datetime.now().isoformat() (naive, microseconds always present here) */
export function isoLocal(us: Micros): string {
  const { date: d, micros } = parts(us);
  return `${isoSecondPrefix(d)}.${pad(micros, 6)}`;
}

export function isoSecondPrefix(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** loguru {time:HH:mm:ss} */
export function clockTime(us: Micros): string {
  const { date: d } = parts(us);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** "YYYY-MM-DD HH:MM:SS" as in execution_trace.md headers */
export function traceTime(us: Micros): string {
  return isoSecondPrefix(parts(us).date).replace('T', ' ');
}

export const SECOND: Micros = 1_000_000;
export const MILLI: Micros = 1_000;
