import { closeSync, openSync, readdirSync, rmdirSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../types/events.ts';
import type { EventSink } from './bus.ts';
import { writeFileAtomicSync } from '../state/atomic-file.ts';
import { ensureStateDir, type StateWarn } from '../state/set-aside.ts';
import { writeProblem, type WriteProblem } from '../state/write-problem.ts';

export function runDir(root: string, runId: string): string {
  return path.join(root, '.refinery', 'runs', runId);
}

const KEEP_RUNS = 100;

/** Keeps the newest run logs only (run ids sort by time); a watch session makes many. */
function pruneRuns(root: string): void {
  const dir = path.join(root, '.refinery', 'runs');
  let runs: string[];
  try {
    runs = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const old of runs.slice(0, Math.max(0, runs.length - KEEP_RUNS))) removeRunLog(path.join(dir, old));
}

/**
 * A run's log folder, its files unlinked one by one: rmSync's recursive walk (loaded and run on
 * every run for the one folder a run prunes) cost ~1 ms of a no-op. Anything else in it (a
 * folder someone put there) goes through rmSync.
 */
function removeRunLog(folder: string): void {
  try {
    for (const name of readdirSync(folder)) unlinkSync(path.join(folder, name));
    rmdirSync(folder);
  } catch {
    rmSync(folder, { recursive: true, force: true });
  }
}

function writeAll(fd: number, text: string): void {
  const data = Buffer.from(text);
  for (let done = 0; done < data.length; ) done += writeSync(fd, data, done);
}

export interface JsonlSink {
  sink: EventSink;
  /** Flushes and closes; returns the first write that failed (a full disk), if one did. */
  close: () => WriteProblem | undefined;
}

/**
 * Appends every event as one JSON line to `.refinery/runs/<run>/events.jsonl`; writes
 * summary.json at the end. The log is a record, not the run: a write that fails (a full disk)
 * stops the log, never the run, and is returned by close() for the CLI to report.
 */
export function jsonlSink(root: string, runId: string, warn?: StateWarn): JsonlSink {
  const dir = runDir(root, runId);
  const log = path.join(dir, 'events.jsonl');
  let problem: WriteProblem | undefined;
  let fd: number | undefined;
  try {
    pruneRuns(root);
    ensureStateDir(root, dir, warn);
    fd = openSync(log, 'a');
  } catch (error) {
    problem = writeProblem(log, error);
  }
  let pending: string[] = [];
  const stop = (file: string, error: unknown): void => {
    problem ??= writeProblem(file, error);
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
  };
  const flush = (): void => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    if (fd === undefined) return;
    try {
      writeAll(fd, text);
    } catch (error) {
      stop(log, error);
    }
  };
  let scheduled = false;
  const flushSoon = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      flush();
    });
  };
  const sink: EventSink = (event: RunEvent) => {
    pending.push(`${JSON.stringify(event)}\n`);
    // Written in batches once per turn of the event loop: thousands of stages emit in bursts.
    if (pending.length >= 512) flush();
    else flushSoon();
    if (event.type === 'run-end') {
      flush();
      if (fd === undefined) return;
      const summary = path.join(dir, 'summary.json');
      try {
        writeFileAtomicSync(
          summary,
          `${JSON.stringify({ runId: event.runId, pipeline: event.pipeline, status: event.status, durationMs: event.durationMs, counts: event.counts, ...(event.remote ? { remote: event.remote } : {}), finishedAt: event.time }, null, 2)}\n`,
        );
      } catch (error) {
        stop(summary, error);
      }
    }
  };
  return {
    sink,
    close: () => {
      flush();
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      return problem;
    },
  };
}
