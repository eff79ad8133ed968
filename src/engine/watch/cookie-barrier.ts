import { type FSWatcher, unlinkSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A barrier behind every file-system change made before it is called: it writes a cookie file
 * and waits until the notification for it arrives. All watches of a process share one inotify
 * queue, read in order, so once the cookie is seen every notification queued before it has
 * been handed out (the way Watchman syncs a query with its watcher).
 */
export class CookieBarrier {
  private readonly watcher: FSWatcher;
  private readonly waiting = new Map<string, () => void>();
  private count = 0;

  constructor(private readonly dir: string) {
    this.watcher = watch(dir, (_event, name) => {
      const done = name ? this.waiting.get(String(name)) : undefined;
      if (!done) return;
      this.waiting.delete(String(name));
      done();
    });
    this.watcher.on('error', () => this.failAll());
  }

  /** Resolves true once every change made before the call has been notified; false if that could not be shown in time. */
  sync(timeoutMs = 2000): Promise<boolean> {
    this.count += 1;
    const name = `cookie-${process.pid}-${this.count}`;
    const file = path.join(this.dir, name);
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiting.delete(name);
        try {
          unlinkSync(file);
        } catch {
          // Already gone, or never written.
        }
        resolve(ok);
      };
      this.waiting.set(name, () => finish(true));
      try {
        writeFileSync(file, '', { mode: 0o600 });
      } catch {
        finish(false);
      }
    });
  }

  private failAll(): void {
    for (const name of [...this.waiting.keys()]) this.waiting.delete(name);
  }

  close(): void {
    this.watcher.close();
  }
}
