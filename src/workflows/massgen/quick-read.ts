// Small synchronous reads for listings over many runs: a run's headline figures from status.json
// and metrics_summary.json, and the MassGen session it names (session-marker.ts) from
// execution_metadata.yaml and the head of massgen.log. Damaged or missing files give nulls.
import { closeSync, lstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { num, obj, str } from './coerce.ts';
import { markerOfLogLine, markerOfMetadata, strongestMarker, type SessionMarker } from './session-marker.ts';
import { parseYamlText } from './yaml-file.ts';
import { cleanLogValue } from './log-text.ts';

const JSON_CAP = 16 * 1024 * 1024;
const YAML_CAP = 2 * 1024 * 1024;
/** MassGen names the session in its first lines (after the two "Logging enabled" pairs). */
const LOG_HEAD = 16 * 1024;

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
    return obj(cleanLogValue(JSON.parse(head.text)));
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

/**
 * `session_id` and `mode` directly under a top-level key of a PyYAML dump (block style, two-space
 * indent, as MassGen's yaml.dump writes it); null when the block looks otherwise (the caller then
 * parses the whole file).
 */
export function blockScalars(text: string, block: string): Record<string, string | null> | null {
  const out: Record<string, string | null> = {};
  const start = text.startsWith(`${block}:\n`) ? 0 : text.indexOf(`\n${block}:\n`);
  if (start < 0) return out;
  let at = text.indexOf('\n', start + 1) + 1;
  while (at > 0 && at < text.length && text.startsWith('  ', at)) {
    const end = text.indexOf('\n', at);
    const line = text.slice(at, end < 0 ? text.length : end);
    const m = /^ {2}(session_id|mode): *(.*)$/.exec(line);
    if (m) {
      const raw = (m[2] ?? '').trim();
      if (/^['"]/.test(raw) || raw.startsWith('&') || raw.startsWith('*') || raw.startsWith('!')) return null;
      out[m[1] as string] = raw === 'null' || raw === '~' || raw === '' ? null : raw;
    }
    at = end < 0 ? text.length : end + 1;
  }
  return out;
}

/** The session a run folder names, if any: execution_metadata.yaml, then the head of massgen.log. */
export function quickSessionMarker(runDir: string, relDir: string): SessionMarker | null {
  const markers: SessionMarker[] = [];
  const at = (name: string): string => (relDir ? `${relDir}/${name}` : name);
  const meta = readHead(path.join(runDir, 'execution_metadata.yaml'), YAML_CAP);
  if (meta?.whole && meta.text.includes('session_id:')) {
    let cli = blockScalars(meta.text, 'cli_args');
    let config = blockScalars(meta.text, 'config');
    if (cli === null || config === null) {
      const parsed = parseYamlText(meta.text);
      const root = parsed.ok ? obj(parsed.value) : null;
      const c = obj(root?.cli_args);
      cli = { session_id: str(c?.session_id), mode: str(c?.mode) };
      config = { session_id: str(obj(root?.config)?.session_id) };
    }
    const marker = markerOfMetadata(cli.session_id ?? null, cli.mode ?? null, config.session_id ?? null, at('execution_metadata.yaml'));
    if (marker) markers.push(marker);
  }
  for (const name of ['massgen.log', 'massgen_debug.log']) {
    const log = readHead(path.join(runDir, name), LOG_HEAD);
    if (!log) continue;
    for (let hit = log.text.indexOf(' session '); hit >= 0; hit = log.text.indexOf(' session ', hit + 1)) {
      const lineStart = log.text.lastIndexOf('\n', hit) + 1;
      const lineEnd = log.text.indexOf('\n', hit);
      const m = markerOfLogLine(log.text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd));
      if (m) markers.push({ ...m, evidence: `${at(name)} line ${log.text.slice(0, lineStart).split('\n').length}` });
    }
    break;
  }
  return strongestMarker(markers);
}
