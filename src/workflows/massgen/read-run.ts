// Reads every known file of one run directory. Every file is optional; problems become warnings.
import path from 'node:path';
import { listDir, readCapped, type Entry } from './fs-safe.ts';
import { readJsonFile } from './json-file.ts';
import type { FileInfo, RunData, RunDir, SubagentData, WarningSink } from './model.ts';
import { parseCoordinationEvents } from './parse-coordination-events.ts';
import { parseCoordinationTable } from './parse-coordination-table.ts';
import { parseEventsFile } from './parse-events.ts';
import { parseMetadata } from './parse-metadata.ts';
import { parseMetricsEvents, parseMetricsSummary } from './parse-metrics.ts';
import { parseSnapshotMappings } from './parse-snapshot-mappings.ts';
import { parseStatus } from './parse-status.ts';
import { parseTextLog } from './parse-text-log.ts';
import { readSnapshots } from './read-snapshots.ts';
import { checkShape } from './shape-check.ts';
import { checkExpectedFiles } from './expected-files.ts';
import { forEachLine, type LineOptions } from './read-lines.ts';

export interface ReadRunOptions {
  /** Paths in warnings and file lists are relative to this dir (the turn dir or legacy log root). */
  baseDir: string;
  lines?: LineOptions;
  /** Whether to read subagents/<id>/full_logs (false inside a subagent). */
  subagents?: boolean;
  /** Skip the streamed logs (events.jsonl, massgen.log, streaming_debug.log): for quick listings. */
  skipStreams?: boolean;
  /** End-of-run JSON files larger than this are skipped with a warning (default JSON_FILE_CAP). */
  maxJsonBytes?: number;
}

/** execution_metadata.yaml is a config dump (kilobytes); the yaml library needs ~50x a file's size. */
const METADATA_CAP = 2 * 1024 * 1024;

export async function readRun(run: RunDir, warn: WarningSink, options: ReadRunOptions): Promise<RunData> {
  const rel = (p: string): string => path.relative(options.baseDir, p) || '.';
  const entries = await listDir(run.dir);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const file = (name: string): string | null => (byName.get(name)?.kind === 'file' ? path.join(run.dir, name) : null);
  const json = async (name: string): Promise<unknown> => {
    const f = file(name);
    const value = f ? await readJsonFile(f, rel(f), warn, options.maxJsonBytes) : undefined;
    if (f) checkShape(value, name, rel(f), warn);
    return value;
  };
  const relOf = (name: string): string => rel(path.join(run.dir, name));
  const { agentDirs, snapshots } = await readSnapshots(entries, rel, warn);
  const files = await inventory(entries, rel);
  const data: RunData = {
    attempt: run.attempt,
    dir: run.dir,
    relDir: path.relative(options.baseDir, run.dir),
    files,
    newestMtimeMs: files.reduce<number | null>((max, f) => (max === null || f.mtimeMs > max ? f.mtimeMs : max), null),
    status: parseStatus(await json('status.json'), relOf('status.json'), warn),
    metrics: parseMetricsSummary(await json('metrics_summary.json'), relOf('metrics_summary.json'), warn),
    metricsEvents: parseMetricsEvents(await json('metrics_events.json'), relOf('metrics_events.json'), warn),
    coordination: parseCoordinationEvents(await json('coordination_events.json'), relOf('coordination_events.json'), warn),
    mappings: parseSnapshotMappings(await json('snapshot_mappings.json'), relOf('snapshot_mappings.json'), warn),
    snapshots,
    agentDirs,
    finalAgents: (await listDir(path.join(run.dir, 'final'))).filter((e) => e.kind === 'dir').map((e) => e.name),
    table: null,
    events: null,
    massgenLog: null,
    streamingLog: null,
    metadata: null,
    subagents: [],
  };
  const table = file('coordination_table.txt');
  if (table) data.table = await readTableTotals(table, options.lines);
  const events = options.skipStreams ? null : file('events.jsonl');
  if (events) data.events = await parseEventsFile(events, rel(events), warn, options.lines);
  const log = options.skipStreams ? null : (file('massgen.log') ?? file('massgen_debug.log'));
  if (log) data.massgenLog = await parseTextLog(log, rel(log), warn, 'massgen', options.lines);
  const streaming = options.skipStreams ? null : file('streaming_debug.log');
  if (streaming) data.streamingLog = await parseTextLog(streaming, rel(streaming), warn, 'streaming', options.lines);
  const meta = file('execution_metadata.yaml');
  if (meta) {
    const read = await readCapped(meta, METADATA_CAP);
    if (!read.ok) warn(rel(meta), 'unreadable', `cannot read: ${read.reason}`);
    else if (read.truncated)
      warn(
        rel(meta),
        'too-large',
        `file is ${read.bytes} bytes, over the ${METADATA_CAP}-byte limit for YAML; skipped to keep memory bounded`,
      );
    else data.metadata = parseMetadata(read.text, rel(meta), warn);
  }
  if (byName.get('status.json.tmp'))
    warn(relOf('status.json.tmp'), 'stray-tmp', 'leftover status.json.tmp (a crash during a status write); ignored');
  checkExpectedFiles(data, entries, warn, rel(run.dir));
  if (options.subagents !== false) data.subagents = await readSubagents(run, warn, options);
  return data;
}

/** The table's TOTALS row, found line by line: the table itself is never held whole. */
async function readTableTotals(table: string, lines: LineOptions | undefined): Promise<RunData['table']> {
  let totals: RunData['table'] = null;
  const marker = Buffer.from('TOTALS');
  await forEachLine(
    table,
    (buf, start, end) => {
      if (totals !== null) return;
      const line = buf.subarray(start, end);
      if (line.includes(marker)) totals = parseCoordinationTable(line.toString('utf8'));
    },
    { ...(lines?.signal ? { signal: lines.signal } : {}) },
  );
  return totals;
}

async function readSubagents(run: RunDir, warn: WarningSink, options: ReadRunOptions): Promise<SubagentData[]> {
  const out: SubagentData[] = [];
  for (const sub of run.subagents) {
    const child = await readRun({ dir: sub.dir, attempt: 1, subagents: [] }, warn, { ...options, subagents: false });
    out.push({
      id: sub.id,
      dir: path.relative(options.baseDir, sub.dir),
      finishReason: child.status?.finishReason ?? null,
      winner: child.status?.winner ?? child.metrics?.winner ?? child.coordination?.finalWinner ?? null,
      cost: child.metrics?.totalCost ?? child.status?.totalCost ?? null,
      answers: child.snapshots.filter((s) => s.kind === 'answer').length,
      votes: child.snapshots.filter((s) => s.vote !== null).length,
    });
  }
  return out;
}

/** Files directly in the run dir and in its agent snapshot / final dirs (never workspace/ trees). */
async function inventory(entries: Entry[], rel: (p: string) => string): Promise<FileInfo[]> {
  const out: FileInfo[] = [];
  const add = (e: Entry): void => {
    if (e.kind === 'file') out.push({ path: rel(e.path), bytes: e.bytes, mtimeMs: e.mtimeMs });
  };
  for (const e of entries) {
    add(e);
    if (e.kind !== 'dir' || e.name === 'subagents' || /^(turn|attempt)_\d+$/.test(e.name)) continue;
    for (const child of await listDir(e.path)) {
      add(child);
      if (child.kind === 'dir') for (const leaf of await listDir(child.path)) add(leaf);
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
