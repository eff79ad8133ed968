import { closeSync, mkdirSync, openSync, writeSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../model/events.ts';
import type { EventSink } from './bus.ts';

export function runDir(root: string, runId: string): string {
  return path.join(root, '.refinery', 'runs', runId);
}

/** Appends every event as one JSON line to `.refinery/runs/<run>/events.jsonl`; writes summary.json at the end. */
export function jsonlSink(root: string, runId: string): { sink: EventSink; close: () => void } {
  const dir = runDir(root, runId);
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
