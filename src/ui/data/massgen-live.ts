// A MassGen run as it goes on, for its live page: the newest attempt's status.json (phase,
// completion, each agent's status and error) and what each agent has written so far under
// agent_outputs/, read a piece at a time from where the page left off. MassGen's own Web UI shows
// the same while a run is going on. The folder is one the MassGen store located (inside a logs
// folder, inside the project); a file is named by the page and checked against what the folder
// holds: a regular file (no symlink) of agent_outputs/ with a plain name.
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { readLiveStatus } from '../../workflows/massgen/experiments/status-progress.ts';
import { openPem, readPiece } from '../file-piece.ts';
import { relativeInProject } from '../safe-path.ts';

export interface LiveRunView {
  session: string;
  logDir: string;
  /** The attempt shown (root-relative): the newest one of the newest turn. */
  attemptDir: string;
  turn: number | null;
  attempt: number | null;
  /** The turn's folder, for its report page. */
  turnDir: string | null;
  status: {
    phase: string;
    fraction: number;
    complete: boolean;
    finishReason: string | null;
    winner: string | null;
    agents: Array<{ id: string; status: string; error: string | null }>;
  } | null;
  outputs: Array<{ file: string; bytes: number }>;
}

export interface OutputPiece {
  file: string;
  offset: number;
  /** Where the next piece starts. */
  next: number;
  size: number;
  text: string;
}

const OUTPUT_FILE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}\.txt$/;
const PIECE = 64 * 1024;
/** A last line without its line break is held back this long: MassGen may be writing it. */
const SETTLE_MS = 2000;

function newest(dir: string, prefix: string): { n: number; dir: string } | undefined {
  let best: { n: number; dir: string } | undefined;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  for (const name of names) {
    const m = new RegExp(`^${prefix}_(\\d+)$`).exec(name);
    if (!m) continue;
    const abs = path.join(dir, name);
    try {
      if (!lstatSync(abs).isDirectory()) continue;
    } catch {
      continue;
    }
    const n = Number(m[1]);
    if (!best || n > best.n) best = { n, dir: abs };
  }
  return best;
}

/** The folder whose status.json and agent_outputs/ show the run: the newest turn's newest attempt, else the log dir itself (older layouts). */
function attemptOf(logDir: string): { dir: string; turn: number | null; attempt: number | null; turnDir: string | null } {
  const turn = newest(logDir, 'turn');
  if (!turn) return { dir: logDir, turn: null, attempt: null, turnDir: null };
  const attempt = newest(turn.dir, 'attempt');
  return { dir: attempt?.dir ?? turn.dir, turn: turn.n, attempt: attempt?.n ?? null, turnDir: turn.dir };
}

/** `logDir`: an absolute session folder MassGenStore.locate returned. */
export async function liveRun(root: string, logDir: string): Promise<LiveRunView> {
  const at = attemptOf(logDir);
  const status = await readLiveStatus(path.join(at.dir, 'status.json'));
  const outputs: LiveRunView['outputs'] = [];
  const outDir = path.join(at.dir, 'agent_outputs');
  let names: string[] = [];
  try {
    names = readdirSync(outDir).sort();
  } catch {
    names = [];
  }
  for (const file of names) {
    if (!OUTPUT_FILE.test(file)) continue;
    try {
      const info = lstatSync(path.join(outDir, file));
      if (info.isFile()) outputs.push({ file, bytes: info.size });
    } catch {
      // gone meanwhile
    }
  }
  return {
    session: path.basename(logDir),
    logDir: relativeInProject(root, logDir) ?? '',
    attemptDir: relativeInProject(root, at.dir) ?? '',
    turn: at.turn,
    attempt: at.attempt,
    turnDir: at.turnDir ? (relativeInProject(root, at.turnDir) ?? null) : null,
    status: status
      ? {
          phase: status.phase,
          fraction: status.fraction,
          complete: status.complete,
          finishReason: status.finishReason,
          winner: status.winner,
          agents: Object.entries(status.agents).map(([id, a]) => ({ id, status: a.status, error: a.error })),
        }
      : null,
    outputs,
  };
}

/**
 * What an agent's output file holds from `offset` on, up to a piece's length, ending at a line
 * break (the redactor then sees each line whole); undefined when `file` is not one of the folder's
 * agent outputs. `attemptDir`: an absolute folder MassGenStore.locate returned.
 */
export function outputPiece(attemptDir: string, file: string, offset: number, now = Date.now()): OutputPiece | undefined {
  if (!OUTPUT_FILE.test(file)) return undefined;
  const abs = path.join(attemptDir, 'agent_outputs', file);
  let size: number;
  let mtimeMs: number;
  try {
    const info = lstatSync(abs);
    if (!info.isFile()) return undefined;
    size = info.size;
    mtimeMs = info.mtimeMs;
  } catch {
    return undefined;
  }
  // A file shorter than the offset was rewritten: the page starts it again from 0.
  const from = offset > size ? 0 : offset;
  if (from === size) return { file, offset: from, next: from, size, text: '' };
  const piece = readPiece(abs, from, PIECE, size);
  let bytes = piece.bytes;
  if (piece.start + bytes.length >= size && now - mtimeMs < SETTLE_MS) {
    // The last line may be half-written (a key cut in two would pass the redactor): held back.
    if (bytes.at(-1) !== 10) bytes = bytes.subarray(0, bytes.lastIndexOf(10) + 1);
    // So is a PEM key still being written, from its first line on.
    const open = openPem(bytes.toString('latin1'));
    if (open !== -1) bytes = bytes.subarray(0, open);
  }
  // readPiece starts earlier only inside a PEM key, which is never left open here: kept for safety.
  const fresh = bytes.subarray(Math.min(Math.max(0, from - piece.start), bytes.length));
  return { file, offset: from, next: Math.max(from, piece.start + bytes.length), size, text: fresh.toString('utf8') };
}
