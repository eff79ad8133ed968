import type { RemoteCacheSummary, RunEvent, StageEndEvent, StageStatus } from '../types/events.ts';
import type { EventSink } from './bus.ts';
import { eraseLinesAbove, styled } from '../diagnostics/terminal-style.ts';

export interface ConsoleOptions {
  out: NodeJS.WritableStream;
  /** Live task list (TTY) or one plain line per event (CI, pipes). */
  live: boolean;
  color: boolean;
  /** Also print up-to-date stages and log lines. */
  verbose: boolean;
  columns?: number;
}

const SYMBOL: Record<StageStatus, string> = { succeeded: '✓', failed: '✗', fresh: '=', skipped: '-', blocked: '⊘', aborted: '!' };

function seconds(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}

function paint(color: boolean, code: number, text: string): string {
  return color ? styled(code, 39, text) : text;
}

const STATUS_COLOR: Record<StageStatus, number> = { succeeded: 32, failed: 31, fresh: 90, skipped: 90, blocked: 33, aborted: 33 };

function endLine(e: StageEndEvent, color: boolean): string {
  const mark = paint(color, STATUS_COLOR[e.status], SYMBOL[e.status]);
  const detail =
    e.status === 'succeeded'
      ? `${seconds(e.durationMs)}${e.summary ? `  ${e.summary}` : ''}${e.attempts > 1 ? `  (attempt ${e.attempts})` : ''}`
      : e.status === 'fresh'
        ? 'up to date'
        : `${e.status}: ${e.reason ?? ''}`;
  const lines = [`${mark} ${e.stage}  ${detail}`];
  for (const i of e.issues ?? []) lines.push(`    ${i.path}${i.pointer ? ` ${i.pointer}` : ''}: ${i.message}`);
  if (e.rejectedDir) lines.push(`    rejected artifact kept in ${e.rejectedDir}`);
  return lines.join('\n');
}

function summaryLine(e: Extract<RunEvent, { type: 'run-end' }>, color: boolean): string {
  const parts = (Object.entries(e.counts) as Array<[StageStatus, number]>)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s === 'fresh' ? 'up to date' : s}`);
  const head = e.status === 'succeeded' ? paint(color, 32, 'done') : paint(color, 31, e.status);
  const line = `${head}: ${e.pipeline}: ${parts.join(', ') || 'nothing to do'} in ${seconds(e.durationMs)} (run ${e.runId})`;
  return e.remote ? `${line}\n${remoteCacheLine(e.remote)}` : line;
}

/** One line on what the remote cache served and saved (also used by `refinery status`). */
export function remoteCacheLine(r: RemoteCacheSummary): string {
  const served = `${r.stages} stage${r.stages === 1 ? '' : 's'} and ${r.calls} model call${r.calls === 1 ? '' : 's'} from it`;
  const saved = r.stages + r.calls > 0 ? `, saving ${seconds(r.savedMs)} and $${r.savedUsd.toFixed(4)}` : '';
  const stored = r.readOnly ? ' (read-only)' : `, ${r.uploaded} entr${r.uploaded === 1 ? 'y' : 'ies'} stored`;
  const trouble = [
    r.refused ? `${r.refused} refused` : '',
    r.problems - r.refused > 0 ? `${r.problems - r.refused} warning${r.problems - r.refused === 1 ? '' : 's'}` : '',
  ]
    .filter(Boolean)
    .join(', ');
  return `remote cache ${r.url}: ${served}${saved}${stored}${trouble ? `; ${trouble}` : ''}`;
}

/** Renders run events for a person: a live list of running stages on a TTY, plain lines elsewhere. */
export function consoleSink(options: ConsoleOptions): EventSink {
  const running = new Map<string, { started: number; fraction?: number; message?: string }>();
  const logTail = new Map<string, string[]>();
  let drawn = 0;
  let timer: NodeJS.Timeout | undefined;
  // Plain lines are written in batches, at most one event-loop turn late: a write per line
  // cost more than a small stage in the 10,000-stage benchmark.
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (!pending) return;
    const text = pending;
    pending = '';
    options.out.write(text);
  };
  const write = (text: string): void => {
    if (options.live) {
      options.out.write(text);
      return;
    }
    pending += text;
    if (pending.length > 32_768) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const clear = (): void => {
    if (drawn > 0) write(eraseLinesAbove(drawn));
    drawn = 0;
  };
  const draw = (): void => {
    if (!options.live) return;
    clear();
    const width = Math.max(20, (options.columns ?? 100) - 1);
    const rows = [...running.entries()].slice(0, 12).map(([id, r]) => {
      const pct = r.fraction !== undefined ? ` ${Math.round(r.fraction * 100)}%` : '';
      return `${paint(options.color, 36, '▶')} ${id}${pct} ${seconds(Date.now() - r.started)}${r.message ? `  ${r.message}` : ''}`.slice(
        0,
        width,
      );
    });
    if (running.size > rows.length) rows.push(`  … ${running.size - rows.length} more running`);
    if (rows.length) write(`${rows.join('\n')}\n`);
    drawn = rows.length;
  };
  const permanent = (text: string): void => {
    clear();
    write(`${text}\n`);
    draw();
  };
  return (event: RunEvent) => {
    switch (event.type) {
      case 'run-start':
        if (options.live) timer = setInterval(draw, 200).unref();
        if (!options.live) write(`run ${event.runId}: pipeline ${event.pipeline}, ${event.stages} stages, -j${event.concurrency}\n`);
        return;
      case 'stage-start':
        running.set(event.stage, { started: Date.now() });
        if (!options.live)
          write(
            `▶ ${event.stage}  ${event.worker ? `on worker ${event.worker}: ` : ''}${event.attempt > 1 ? `attempt ${event.attempt}: ` : ''}${event.reason}\n`,
          );
        else draw();
        return;
      case 'stage-progress': {
        const r = running.get(event.stage);
        if (r) {
          r.fraction = event.fraction;
          if (event.message !== undefined) r.message = event.message;
        }
        if (!options.live && options.verbose)
          write(`  ${event.stage} ${Math.round(event.fraction * 100)}%${event.message ? ` ${event.message}` : ''}\n`);
        return;
      }
      case 'stage-log': {
        const tail = logTail.get(event.stage) ?? [];
        tail.push(event.message);
        if (tail.length > 10) tail.shift();
        logTail.set(event.stage, tail);
        if (options.verbose) permanent(`  ${event.stage} | ${event.message}`);
        return;
      }
      case 'stage-report':
        if (event.report.kind === 'warning') permanent(`${paint(options.color, 33, 'warning')} ${event.stage}: ${event.report.message}`);
        return;
      case 'stage-end': {
        running.delete(event.stage);
        if (event.status === 'fresh' && !options.verbose) return;
        let text = endLine(event, options.color);
        const tail = logTail.get(event.stage);
        if (event.status === 'failed' && tail?.length && !options.verbose) text += `\n${tail.map((l) => `    | ${l}`).join('\n')}`;
        logTail.delete(event.stage);
        permanent(text);
        return;
      }
      case 'loop-iteration':
        permanent(`↻ ${event.loop} iteration ${event.iteration}: ${event.decision}`);
        return;
      case 'run-end':
        if (timer) clearInterval(timer);
        clear();
        write(`${summaryLine(event, options.color)}\n`);
        flush();
        return;
      default:
        // Every event type has its case: a new one does not compile until it is given one.
        event satisfies never;
    }
  };
}
