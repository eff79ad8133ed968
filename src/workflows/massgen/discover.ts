// Finds sessions, turns, attempts and nested subagent runs in every MassGen layout (spec §1).
// Directories are listed with lstat: symlinks (live_logs, *_latest.txt) are never followed.
import path from 'node:path';
import { subdirNames } from '../../engine/paths/subdirs.ts';
import { listDir, numberedName, SNAPSHOT_DIR, type Entry } from './fs-safe.ts';
import type { RunDir, TurnUnit } from './model.ts';

/** Files only a MassGen run folder holds: a folder with one of them is a run. */
export const RUN_MARKERS: ReadonlySet<string> = new Set([
  'status.json',
  'metrics_summary.json',
  'coordination_events.json',
  'execution_metadata.yaml',
  'events.jsonl',
  'massgen.log',
  'massgen_debug.log',
  'snapshot_mappings.json',
]);

const SESSION_DIR = /^log_\d{8}_\d{6}(_\d{6})?$/;

/** Session roots (`log_*` directories) under a logs folder, sorted by name (oldest first). */
export async function listSessions(logsDir: string): Promise<string[]> {
  return (await subdirNames(logsDir)).filter((name) => name.startsWith('log_')).map((name) => path.join(logsDir, name));
}

export function isSessionName(name: string): boolean {
  return SESSION_DIR.test(name);
}

/** Every turn unit of every session under a logs folder, sessions by name, turns numerically. */
export async function listTurnUnits(logsDir: string): Promise<TurnUnit[]> {
  const units: TurnUnit[] = [];
  for (const session of await listSessions(logsDir)) units.push(...(await turnUnitsOfSession(session)));
  return units;
}

function numbered(entries: Entry[], prefix: string): { n: number; entry: Entry }[] {
  return entries
    .filter((e) => e.kind === 'dir')
    .map((entry) => ({ n: numberedName(entry.name, prefix), entry }))
    .filter((x): x is { n: number; entry: Entry } => x.n !== null)
    .sort((a, b) => a.n - b.n);
}

/** The turn units of one session root (`log_*`). */
export async function turnUnitsOfSession(logDir: string): Promise<TurnUnit[]> {
  const entries = await listDir(logDir);
  const turns = numbered(entries, 'turn');
  const units: TurnUnit[] = [];
  const rootIsRun = await isRunDir(logDir, entries);
  const rootAttempts = numbered(entries, 'attempt');
  if (rootAttempts.length > 0) {
    units.push({ logDir, turnDir: null, turn: turns.length > 0 ? 0 : 1, layout: 'attempt', attempts: await runDirs(rootAttempts) });
  } else if (rootIsRun) {
    units.push({ logDir, turnDir: null, turn: turns.length > 0 ? 0 : 1, layout: 'flat', attempts: [await runDir(logDir, 1)] });
  }
  for (const { n, entry } of turns) units.push(await turnUnit(logDir, entry.path, n));
  return units;
}

async function turnUnit(logDir: string, turnDir: string, turn: number): Promise<TurnUnit> {
  const attempts = numbered(await listDir(turnDir), 'attempt');
  if (attempts.length > 0) return { logDir, turnDir, turn, layout: 'turn-attempt', attempts: await runDirs(attempts) };
  return { logDir, turnDir, turn, layout: 'turn', attempts: [await runDir(turnDir, 1)] };
}

async function runDirs(attempts: { n: number; entry: Entry }[]): Promise<RunDir[]> {
  const out: RunDir[] = [];
  for (const { n, entry } of attempts) out.push(await runDir(entry.path, n));
  return out;
}

async function runDir(dir: string, attempt: number): Promise<RunDir> {
  return { dir, attempt, subagents: await subagentRuns(dir) };
}

/** `subagents/<id>/full_logs` copies: complete nested runs of their parent, never separate sessions. */
export async function subagentRuns(dir: string): Promise<{ id: string; dir: string }[]> {
  const out: { id: string; dir: string }[] = [];
  for (const sub of await listDir(path.join(dir, 'subagents'))) {
    if (sub.kind !== 'dir') continue;
    const full = (await listDir(sub.path)).find((e) => e.name === 'full_logs');
    if (full?.kind === 'dir') out.push({ id: sub.name, dir: full.path });
  }
  return out;
}

/** A run dir directly holds a run file or an agent dir with snapshot children (spec §1.3). */
export async function isRunDir(dir: string, entries?: Entry[]): Promise<boolean> {
  const list = entries ?? (await listDir(dir));
  if (list.some((e) => e.kind === 'file' && RUN_MARKERS.has(e.name))) return true;
  for (const e of list) if (e.kind === 'dir' && (await hasSnapshotChildren(e.path))) return true;
  return false;
}

export async function hasSnapshotChildren(dir: string): Promise<boolean> {
  return (await listDir(dir)).some((e) => e.kind === 'dir' && SNAPSHOT_DIR.test(e.name));
}

export type ResolvedUnit = { ok: true; unit: TurnUnit } | { ok: false; reason: string };

/**
 * The turn unit for a path: a `turn_N` dir, an `attempt_M` dir (its turn is used), or a session
 * root holding a legacy flat (or attempt-only) run.
 */
export async function resolveTurnUnit(target: string): Promise<ResolvedUnit> {
  const dir = path.resolve(target);
  const base = path.basename(dir);
  const parent = path.dirname(dir);
  if (numberedName(base, 'attempt') !== null && numberedName(path.basename(parent), 'turn') !== null) {
    return resolveTurnUnit(parent);
  }
  const turn = numberedName(base, 'turn');
  if (turn !== null) {
    const entries = await listDir(dir);
    if (entries.length === 0 && (await listDir(parent)).every((e) => e.name !== base)) {
      return { ok: false, reason: `${dir} does not exist` };
    }
    return { ok: true, unit: await turnUnit(parent, dir, turn) };
  }
  const units = await turnUnitsOfSession(dir);
  const flat = units.find((u) => u.turnDir === null);
  if (flat) return { ok: true, unit: flat };
  if (units.length > 0) {
    const names = units.map((u) => `turn_${u.turn}`).join(', ');
    return {
      ok: false,
      reason: `${dir} is a session root with turns (${names}); pass one turn dir, e.g. ${path.join(dir, `turn_${units[units.length - 1]?.turn ?? 1}`)}`,
    };
  }
  return { ok: false, reason: `${dir} holds no MassGen run (no status.json, metrics, coordination events, metadata or agent snapshots)` };
}

/** Where the analysis of a unit lives: `turn_N/` or, for legacy flat logs, the log root. */
export function reportDirOf(unit: TurnUnit): string {
  return unit.turnDir ?? unit.logDir;
}
