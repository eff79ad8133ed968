import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface, type Interface } from 'node:readline';

/**
 * An exclusive `flock(2)` lock on a file: the lock Python's `fcntl.flock(fd, LOCK_EX)` takes.
 *
 * Node has no flock. A small resident perl helper (perl-base is part of every Debian system) holds
 * our open file description of the lock file as its fd 3 and runs `flock(LOCK_EX)` / `flock(LOCK_UN)`
 * on request; a flock belongs to the open file description, so it is the same lock any other process
 * sees. One helper per lock file and process, started on first use. Within this process, critical
 * sections queue; a waiting batch runs under one flock (bounded, so other processes get their turn).
 */
export class FileLockError extends Error {}

const PERL_LOCKER = String.raw`
use strict; use warnings; use Fcntl qw(:flock);
open(my $fh, '>>&=', 3) or die "cannot use fd 3: $!\n";
$| = 1;
while (my $line = <STDIN>) {
  chomp $line;
  my ($cmd, $timeout) = split / /, $line;
  if ($cmd eq 'L') {
    my $ok = eval {
      local $SIG{ALRM} = sub { die "timeout\n" };
      alarm($timeout);
      flock($fh, LOCK_EX) or die "flock: $!\n";
      alarm(0);
      1;
    };
    alarm(0);
    my $why = $@; $why =~ s/\n//g;
    print($ok ? "ok\n" : "err $why\n");
  } elsif ($cmd eq 'U') {
    flock($fh, LOCK_UN);
    print "ok\n";
  }
}
`;

interface Waiter {
  run: () => Promise<void>;
  fail: (error: unknown) => void;
}

interface LockQueue {
  waiters: Waiter[];
  draining: boolean;
}

const MAX_BATCH = 64;
const queues = new Map<string, LockQueue>();
const helpers = new Map<string, LockHelper>();

export interface LockOptions {
  /** Give up after this long waiting for another process (default 30 s, at least 1 s). */
  timeoutSec?: number;
}

/** Runs `fn` while holding the exclusive lock on `lockPath` (created if missing). */
export function withFileLock<T>(lockPath: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let queue = queues.get(lockPath);
    if (!queue) {
      queue = { waiters: [], draining: false };
      queues.set(lockPath, queue);
    }
    queue.waiters.push({ run: () => Promise.resolve().then(fn).then(resolve, reject), fail: reject });
    if (!queue.draining) void drain(lockPath, queue, Math.max(1, Math.ceil(options.timeoutSec ?? 30)));
  });
}

async function drain(lockPath: string, queue: LockQueue, timeoutSec: number): Promise<void> {
  queue.draining = true;
  while (queue.waiters.length > 0) {
    let helper: LockHelper;
    try {
      helper = helperFor(lockPath);
      await helper.request(`L ${timeoutSec}`, timeoutSec);
    } catch (error) {
      for (const waiter of queue.waiters.splice(0)) waiter.fail(error);
      break;
    }
    try {
      for (let i = 0; i < MAX_BATCH && queue.waiters.length > 0; i += 1) {
        await (queue.waiters.shift() as Waiter).run();
      }
    } finally {
      await helper.request('U', 10).catch(() => helper.dispose());
    }
  }
  queue.draining = false;
  if (queue.waiters.length === 0) queues.delete(lockPath);
}

function helperFor(lockPath: string): LockHelper {
  let helper = helpers.get(lockPath);
  if (!helper || helper.dead) {
    helper = new LockHelper(lockPath);
    helpers.set(lockPath, helper);
  }
  return helper;
}

/** The resident perl process that owns flock calls on one lock file. Never keeps Node alive when idle. */
class LockHelper {
  dead = false;
  private readonly child: ChildProcess;
  private readonly lines: Interface;
  private readonly fd: number;
  private pending: { resolve: (line: string) => void; reject: (error: Error) => void } | undefined;
  private stderr = '';

  constructor(private readonly lockPath: string) {
    try {
      this.fd = openSync(lockPath, 'a', 0o644);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new FileLockError(`cannot open the registry lock ${lockPath}: ${code ?? String(error)}`);
    }
    this.child = spawn('perl', ['-e', PERL_LOCKER], { stdio: ['pipe', 'pipe', 'pipe', this.fd] });
    this.lines = createInterface({ input: this.child.stdout as NodeJS.ReadableStream });
    this.lines.on('line', (line) => {
      const pending = this.pending;
      this.pending = undefined;
      this.idle();
      pending?.resolve(line);
    });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.child.on('error', (error: NodeJS.ErrnoException) =>
      this.die(error.code === 'ENOENT' ? `cannot lock ${lockPath}: perl is not installed` : `cannot lock ${lockPath}: ${error.message}`),
    );
    this.child.on('exit', (code) => this.die(`the lock helper for ${lockPath} exited (${code}): ${this.stderr.trim()}`));
    this.child.unref();
    this.idle();
  }

  /** Sends one command and resolves on "ok"; rejects on "err ..." or a dead helper. */
  request(command: string, timeoutSec: number): Promise<void> {
    if (this.dead) return Promise.reject(new FileLockError(`the lock helper for ${this.lockPath} is gone`));
    this.busy();
    return new Promise<string>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.stdin?.write(`${command}\n`);
    }).then((line) => {
      if (line === 'ok') return;
      if (line.includes('timeout')) {
        throw new FileLockError(`registry lock ${this.lockPath} is still held by another process after ${timeoutSec} s`);
      }
      throw new FileLockError(`cannot lock ${this.lockPath}: ${line.replace(/^err /, '')}`);
    });
  }

  dispose(): void {
    if (!this.dead) this.child.kill();
  }

  private die(message: string): void {
    if (this.dead) return;
    this.dead = true;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.pending?.reject(new FileLockError(message));
    this.pending = undefined;
    this.lines.close();
  }

  private busy(): void {
    (this.child.stdout as Socket | null)?.ref();
  }

  private idle(): void {
    (this.child.stdout as Socket | null)?.unref();
    (this.child.stdin as Socket | null)?.unref?.();
    (this.child.stderr as Socket | null)?.unref();
  }
}
