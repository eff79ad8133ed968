import { closeSync, mkdirSync, openSync, readdirSync, rmSync, writeSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../model/events.ts';
import type { EventSink } from './bus.ts';

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
  for (const old of runs.slice(0, Math.max(0, runs.length - KEEP_RUNS))) rmSync(path.join(dir, old), { recursive: true, force: true });
}

/** Appends every event as one JSON line to `.refinery/runs/<run>/events.jsonl`; writes summary.json at the end. */
export function jsonlSink(root: string, runId: string): { sink: EventSink; close: () => void } {
  const dir = runDir(root, runId);
  pruneRuns(root);
  mkdirSync(dir, { recursive: true });
  const fd = openSync(path.join(dir, 'events.jsonl'), 'a');
  let pending: string[] = [];
  let open = true;
  const flush = (): void => {
    if (!open || pending.length === 0) return;
    writeSync(fd, pending.join(''));
    pending = [];
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
      writeFileSync(path.join(dir, 'summary.json'), `${JSON.stringify({ runId: event.runId, pipeline: event.pipeline, status: event.status, durationMs: event.durationMs, counts: event.counts, finishedAt: event.time }, null, 2)}\n`);
    }
  };
  return {
    sink,
    close: () => {
      flush();
      if (open) closeSync(fd);
      open = false;
    },
  };
}
