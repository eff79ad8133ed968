// Standalone `refinery ui` learns of runs made by other processes (`refinery run`, a watch started
// without --ui) by tailing `.refinery/runs/<run>/events.jsonl`: a file watcher on each unfinished
// run's log (inotify: the line is seen within milliseconds of its write), and a poll every half
// second in case a watcher cannot be set or misses a new run folder. A log is read a chunk at a
// time, the event loop free between chunks (the live stream flushes, /api answers), so a run that
// wrote 200,000 lines since the last look is taken in without holding the server.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { RunEvent } from '../engine/types/events.ts';

interface Tail {
  file: string;
  offset: number;
  partial: string;
  decoder: StringDecoder;
  watcher: FSWatcher | undefined;
  finished: boolean;
  /** A read is under way; `again`: something was written meanwhile, read once more after it. */
  reading: boolean;
  again: boolean;
}

const POLL_MS = 500;
const CHUNK = 256 * 1024;

export class RunTailer {
  private readonly tails = new Map<string, Tail>();
  private readonly runsDir: string;
  private readonly timer: NodeJS.Timeout;
  private dirWatcher: FSWatcher | undefined;
  private closed = false;

  constructor(
    root: string,
    private readonly onEvent: (event: RunEvent) => void,
    private readonly onNewRun: (runId: string) => void = () => {},
    /** Resolves when the readers of what is published have room for more (the live stream's pacing). */
    private readonly room: () => Promise<void> = async () => {},
  ) {
    this.runsDir = path.join(root, '.refinery', 'runs');
    // What is already there is history (the API serves it); only what is written from now on is live.
    this.scan(true);
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
  }

  private watchDir(): void {
    if (this.dirWatcher || !existsSync(this.runsDir)) return;
    try {
      this.dirWatcher = watch(this.runsDir, () => this.scan(false));
      this.dirWatcher.on('error', () => {
        this.dirWatcher?.close();
        this.dirWatcher = undefined;
      });
    } catch {
      this.dirWatcher = undefined;
    }
  }

  private scan(initial: boolean): void {
    if (this.closed) return;
    this.watchDir();
    let names: string[];
    try {
      names = readdirSync(this.runsDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (this.tails.has(name)) continue;
      const file = path.join(this.runsDir, name, 'events.jsonl');
      const finished = existsSync(path.join(this.runsDir, name, 'summary.json'));
      if (initial && finished) {
        this.tails.set(name, this.tail(file, 0, true));
        continue;
      }
      const tail = this.tail(file, initial ? this.size(file) : 0, false);
      this.tails.set(name, tail);
      if (!initial) this.onNewRun(name);
      this.follow(name, tail);
    }
    for (const [name, tail] of this.tails) if (!names.includes(name)) this.drop(name, tail);
  }

  private tail(file: string, offset: number, finished: boolean): Tail {
    return { file, offset, partial: '', decoder: new StringDecoder('utf8'), watcher: undefined, finished, reading: false, again: false };
  }

  private size(file: string): number {
    try {
      const fd = openSync(file, 'r');
      try {
        return fstatSync(fd).size;
      } finally {
        closeSync(fd);
      }
    } catch {
      return 0;
    }
  }

  private follow(name: string, tail: Tail): void {
    this.read(name, tail);
    if (tail.finished || tail.watcher || !existsSync(tail.file)) return;
    try {
      tail.watcher = watch(tail.file, () => this.read(name, tail));
      tail.watcher.on('error', () => {
        tail.watcher?.close();
        tail.watcher = undefined;
      });
    } catch {
      tail.watcher = undefined;
    }
  }

  private read(name: string, tail: Tail): void {
    if (this.closed || tail.finished) return;
    if (tail.reading) {
      tail.again = true;
      return;
    }
    tail.reading = true;
    void this.readChunks(tail).finally(() => {
      tail.reading = false;
      if (!tail.again) return;
      tail.again = false;
      this.read(name, tail);
    });
  }

  private async readChunks(tail: Tail): Promise<void> {
    let handle: FileHandle;
    try {
      handle = await open(tail.file, 'r');
    } catch {
      return;
    }
    try {
      const buffer = Buffer.alloc(CHUNK);
      while (!this.closed && !tail.finished) {
        const { size } = await handle.stat();
        if (size < tail.offset) {
          tail.offset = 0;
          tail.partial = '';
        }
        if (size === tail.offset) break;
        const { bytesRead } = await handle.read(buffer, 0, Math.min(size - tail.offset, CHUNK), tail.offset);
        if (bytesRead <= 0) break;
        tail.offset += bytesRead;
        this.lines(tail, tail.decoder.write(buffer.subarray(0, bytesRead)));
        // A turn of the event loop between chunks: the live stream writes, /api answers.
        await new Promise((resolve) => setImmediate(resolve));
        await this.room();
      }
    } catch {
      // Gone or unreadable: the next poll tries again.
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  private lines(tail: Tail, text: string): void {
    const parts = (tail.partial + text).split('\n');
    tail.partial = parts.pop() ?? '';
    for (const line of parts) {
      if (!line) continue;
      let event: RunEvent;
      try {
        event = JSON.parse(line) as RunEvent;
      } catch {
        continue;
      }
      if (typeof event !== 'object' || event === null || typeof event.type !== 'string') continue;
      this.onEvent(event);
      if (event.type === 'run-end') {
        tail.finished = true;
        tail.watcher?.close();
        tail.watcher = undefined;
      }
    }
  }

  private drop(name: string, tail: Tail): void {
    tail.watcher?.close();
    this.tails.delete(name);
  }

  private poll(): void {
    this.scan(false);
    for (const [name, tail] of this.tails) if (!tail.finished) this.follow(name, tail);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.dirWatcher?.close();
    for (const tail of this.tails.values()) tail.watcher?.close();
    this.tails.clear();
  }
}
