// Small synchronous reads for listings over many runs: a run's headline figures from status.json
// and metrics_summary.json, and the MassGen session it names (session-marker.ts) from
// execution_metadata.yaml and the head of massgen.log. Damaged or missing files give nulls.
import { closeSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { num, obj, str } from './coerce.ts';
import { markerOfLogLine, markerOfMetadata, strongestMarker, type SessionMarker } from './session-marker.ts';
import { parseYamlText } from './yaml-file.ts';

const JSON_CAP = 16 * 1024 * 1024;
const YAML_CAP = 2 * 1024 * 1024;
/** MassGen names the session in its first lines (after the two "Logging enabled" pairs). */
const LOG_HEAD = 32 * 1024;

/** At most `max` bytes of a regular file (never through a symlink), or null. */
export function readHead(file: string, max: number): { text: string; whole: boolean } | null {
  let fd: number | undefined;
  try {
    const st = lstatSync(file);
    if (!st.isFile()) return null;
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(Math.min(st.size, max));
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return { text: buffer.toString('utf8', 0, n), whole: st.size <= max };
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function readJson(file: string): Record<string, unknown> | null {
  const head = readHead(file, JSON_CAP);
  if (!head?.whole) return null;
  try {
    return obj(JSON.parse(head.text));
  } catch {
    return null;
  }
}

export interface QuickFigures {
  wallClockSeconds: number | null;
  costUsd: number | null;
  question: string | null;
  /** False when neither status.json nor metrics_summary.json could be read. */
  known: boolean;
}

/** One run folder's figures: wall clock from status.json, cost from metrics_summary.json (subagents included) else status.json. */
export function quickFigures(runDir: string): QuickFigures {
  const status = readJson(path.join(runDir, 'status.json'));
  const metrics = readJson(path.join(runDir, 'metrics_summary.json'));
  const meta = obj(status?.meta);
  return {
    wallClockSeconds: num(meta?.elapsed_seconds),
    costUsd: num(obj(metrics?.totals)?.estimated_cost) ?? num(obj(status?.costs)?.total_estimated_cost),
    question: str(meta?.question) ?? str(obj(metrics?.meta)?.question),
    known: status !== null || metrics !== null,
  };
}

/** The session a run folder names, if any: execution_metadata.yaml, then the head of massgen.log. */
export function quickSessionMarker(runDir: string, relDir: string): SessionMarker | null {
  const markers: SessionMarker[] = [];
  const at = (name: string): string => (relDir ? `${relDir}/${name}` : name);
  const meta = readHead(path.join(runDir, 'execution_metadata.yaml'), YAML_CAP);
  // Most runs say `session_id: null`: parse the YAML only when a value is there.
  if (meta?.whole && /\bsession_id: *[^\s#]/.test(meta.text.replace(/\bsession_id: *null\b/g, ''))) {
    const parsed = parseYamlText(meta.text);
    const root = parsed.ok ? obj(parsed.value) : null;
    const cli = obj(root?.cli_args);
    const marker = markerOfMetadata(str(cli?.session_id), str(cli?.mode), str(obj(root?.config)?.session_id), at('execution_metadata.yaml'));
    if (marker) markers.push(marker);
  }
  for (const name of ['massgen.log', 'massgen_debug.log']) {
    const log = readHead(path.join(runDir, name), LOG_HEAD);
    if (!log) continue;
    log.text.split('\n').forEach((line, i) => {
      if (!line.includes(' session ')) return;
      const m = markerOfLogLine(line);
      if (m) markers.push({ ...m, evidence: `${at(name)} line ${i + 1}` });
    });
    break;
  }
  return strongestMarker(markers);
}
