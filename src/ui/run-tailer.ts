// Standalone `refinery ui` learns of runs made by other processes (`refinery run`, a watch started
// without --ui) by tailing `.refinery/runs/<run>/events.jsonl`: a file watcher on each unfinished
// run's log (inotify: the line is seen within milliseconds of its write), and a poll every half
// second in case a watcher cannot be set or misses a new run folder.
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../engine/types/events.ts';

interface Tail {
  file: string;
  offset: number;
  partial: string;
  watcher: FSWatcher | undefined;
  finished: boolean;
}

const POLL_MS = 500;
const MAX_READ = 8 * 1024 * 1024;

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
        this.tails.set(name, { file, offset: 0, partial: '', watcher: undefined, finished: true });
        continue;
      }
      const tail: Tail = { file, offset: initial ? this.size(file) : 0, partial: '', watcher: undefined, finished: false };
      this.tails.set(name, tail);
      if (!initial) this.onNewRun(name);
      this.follow(name, tail);
    }
    for (const [name, tail] of this.tails) if (!names.includes(name)) this.drop(name, tail);
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

  private read(_name: string, tail: Tail): void {
    if (this.closed || tail.finished) return;
    let fd: number;
    try {
      fd = openSync(tail.file, 'r');
    } catch {
      return;
    }
    try {
      for (;;) {
        const size = fstatSync(fd).size;
        if (size < tail.offset) tail.offset = 0;
        if (size === tail.offset) break;
        const buffer = Buffer.alloc(Math.min(size - tail.offset, MAX_READ));
        const got = readSync(fd, buffer, 0, buffer.length, tail.offset);
        if (got <= 0) break;
        tail.offset += got;
        this.lines(tail, buffer.subarray(0, got).toString('utf8'));
      }
    } finally {
      closeSync(fd);
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
