// Generates synthetic MassGen v0.1.91 log dirs (one per scenario) plus MANIFEST.json into outDir.
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildLogDir } from './build-session.ts';
import { buildManifest } from './manifest.ts';
import type { AttemptRecord, LogDirRecord, ScenarioScript } from './model.ts';
import { createRng } from './prng.ts';
import { renderCoordinationEvents, renderSnapshotMappings } from './render-coordination.ts';
import { renderMetadata } from './render-metadata.ts';
import { renderMetricsEvents, renderMetricsSummary } from './render-metrics.ts';
import { renderStatus } from './render-status.ts';
import { renderCoordinationTable } from './render-table.ts';
import { agentOutputFiles, renderMassgenLog } from './render-text-logs.ts';
import { finalFiles, snapshotFiles, type FileMap } from './render-snapshots.ts';
import { SCENARIOS } from './scenarios.ts';
import { writeEventsJsonl } from './write-events.ts';

export interface GenerateOptions {
  outDir: string;
  seed: number;
  /** scenario names; all when omitted */
  scenarios?: string[];
  /** pad every events.jsonl written to about this many bytes */
  eventsBytes?: number | null;
  /** scripts of one's own instead of the bundled scenarios (tests: hostile ids and texts) */
  scripts?: readonly ScenarioScript[];
  /** index of the first script (run i starts 10 minutes after run i-1): a later batch continues an earlier one */
  firstIndex?: number;
}

export interface GenerateResult {
  logDirs: string[];
  files: number;
  eventsBytes: number;
}

export class GenerateError extends Error {}

function attemptFiles(rec: AttemptRecord, dir: LogDirRecord, files: FileMap, links: Map<string, string>): void {
  const prefix = `${rec.logName}/turn_${rec.turn}/attempt_${rec.attempt}`;
  const restarts = dir.turns.some((t) => t.attempts.length > 1);
  const firstStart = dir.turns[0]?.attempts[0]?.start ?? rec.start;
  files.set(`${prefix}/execution_metadata.yaml`, renderMetadata(rec, { restarts, firstStart }));
  files.set(`${prefix}/massgen.log`, renderMassgenLog(rec));
  files.set(`${prefix}/status.json`, renderStatus(rec));
  for (const out of agentOutputFiles(rec)) {
    const path = `${prefix}/agent_outputs/${out.path}`;
    if (out.symlinkTo !== undefined) links.set(path, out.symlinkTo);
    else files.set(path, out.content ?? '');
  }
  snapshotFiles(rec, files, prefix);
  if (rec.outcome === 'killed') return;
  files.set(`${prefix}/metrics_summary.json`, renderMetricsSummary(rec));
  files.set(`${prefix}/metrics_events.json`, renderMetricsEvents(rec));
  files.set(`${prefix}/coordination_events.json`, renderCoordinationEvents(rec));
  files.set(`${prefix}/coordination_table.txt`, renderCoordinationTable(rec));
  files.set(`${prefix}/snapshot_mappings.json`, renderSnapshotMappings(rec));
  finalFiles(rec, files, `${prefix}/final`);
}

export function selectScenarios(names: string[] | undefined): { script: (typeof SCENARIOS)[number]; index: number }[] {
  const all = SCENARIOS.map((script, index) => ({ script, index }));
  if (!names || names.length === 0) return all;
  return names.map((name) => {
    const found = all.find((s) => s.script.name === name);
    if (!found) throw new GenerateError(`unknown scenario '${name}'; choose from: ${SCENARIOS.map((s) => s.name).join(', ')}`);
    return found;
  });
}

export function buildAll(seed: number, names?: string[]): LogDirRecord[] {
  return selectScenarios(names).map(({ script, index }) => buildLogDir(script, index, seed));
}

export function generateLogs(opts: GenerateOptions): GenerateResult {
  const dirs = opts.scripts
    ? opts.scripts.map((script, index) => buildLogDir(script, (opts.firstIndex ?? 0) + index, opts.seed))
    : buildAll(opts.seed, opts.scenarios);
  mkdirSync(opts.outDir, { recursive: true });
  let count = 0;
  let eventsBytes = 0;
  for (const dir of dirs) {
    rmSync(join(opts.outDir, dir.logName), { recursive: true, force: true });
    const files: FileMap = new Map();
    const links = new Map<string, string>();
    for (const turn of dir.turns) {
      for (const rec of turn.attempts) attemptFiles(rec, dir, files, links);
      const last = turn.attempts[turn.attempts.length - 1];
      if (last?.final) finalFiles(last, files, `${dir.logName}/turn_${turn.turn}/final`);
    }
    for (const [rel, content] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const path = join(opts.outDir, rel);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      count++;
    }
    for (const [rel, target] of links) {
      symlinkSync(target, join(opts.outDir, rel));
      count++;
    }
    for (const turn of dir.turns) {
      for (const rec of turn.attempts) {
        const path = join(opts.outDir, dir.logName, `turn_${rec.turn}`, `attempt_${rec.attempt}`, 'events.jsonl');
        const rng = createRng(opts.seed, `${dir.scenario}/pad/${rec.turn}/${rec.attempt}`);
        eventsBytes += writeEventsJsonl(path, rec.jsonl, opts.eventsBytes ?? null, rng);
        count++;
      }
    }
  }
  writeFileSync(join(opts.outDir, 'MANIFEST.json'), `${JSON.stringify(buildManifest(opts.seed, dirs), null, 2)}\n`);
  return { logDirs: dirs.map((d) => d.logName), files: count + 1, eventsBytes };
}
