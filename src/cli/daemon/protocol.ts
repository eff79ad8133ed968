import { closeSync, fstatSync, lstatSync, openSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * How `refinery run`, `plan` and `status` ask a running `refinery watch`: one JSON object a
 * line over a unix socket in `.refinery/watch/` (a folder only its owner can enter). The client
 * sends a request (and an interrupt per Ctrl-C); the daemon answers `accepted` or `fallback`,
 * then the command's output as it comes and its exit code.
 */
export type ClientMessage =
  | {
      type: 'request';
      /** The daemon answers only a client of the very same build (else: fallback, "out of date"). */
      build: string;
      command: DaemonCommand;
      argv: string[];
      /** Where the client was started: relative paths in argv are from there. */
      workdir: string;
      stdout: { tty: boolean; columns?: number };
      /** What changes how output looks; everything else is the watch's own environment. */
      env: { CI?: string; NO_COLOR?: string };
    }
  | { type: 'interrupt' };

export type DaemonMessage =
  | { type: 'accepted' }
  | { type: 'fallback'; reason: string }
  | { type: 'out'; data: string }
  | { type: 'err'; data: string }
  | { type: 'exit'; code: number };

export const DAEMON_COMMANDS = ['run', 'plan', 'status'] as const;
export type DaemonCommand = (typeof DAEMON_COMMANDS)[number];

/** The longest line either side accepts; a longer one ends the connection. */
export const MAX_LINE = 1 << 20;

export function daemonFolder(root: string): string {
  return path.join(root, '.refinery', 'watch');
}

export function daemonSocket(root: string): string {
  return path.join(daemonFolder(root), 'sock');
}

/** Whether a path fits a unix socket address (sockaddr_un: 108 bytes with its NUL on Linux, 104 on macOS). */
function fits(address: string): boolean {
  return Buffer.byteLength(address) < 104;
}

/** A name the socket can be bound or reached by; `release` once the server is closed, or the client connected. */
export interface SocketAddress {
  address: string;
  release(): void;
}

const NOTHING_TO_RELEASE = (): void => {};

/**
 * A name for the socket that fits a unix socket address, however deep the project: its path;
 * else its path from the working folder; else, on Linux, its name in its folder opened as a
 * descriptor (`/proc/self/fd/N/sock`: the kernel resolves that link to the folder itself).
 * The descriptor stays open until `release`: a server keeps it while it listens, because the
 * socket is unlinked by that name when it closes. Undefined when no name fits.
 */
export function socketAddress(socket: string): SocketAddress | undefined {
  if (fits(socket)) return { address: socket, release: NOTHING_TO_RELEASE };
  let relative: string | undefined;
  try {
    relative = path.relative(process.cwd(), socket);
  } catch {
    // The working folder was removed: no relative name.
  }
  if (relative !== undefined && fits(relative)) return { address: relative, release: NOTHING_TO_RELEASE };
  if (process.platform !== 'linux') return undefined;
  const folder = path.dirname(socket);
  let fd: number;
  try {
    fd = openSync(folder, 'r');
  } catch {
    return undefined;
  }
  // The folder opened must be the one its path names now (its owner and mode were checked by path).
  const opened = fstatSync(fd);
  const named = lstatSync(folder, { throwIfNoEntry: false });
  if (!named || !opened.isDirectory() || named.dev !== opened.dev || named.ino !== opened.ino) {
    closeSync(fd);
    return undefined;
  }
  let released = false;
  return {
    address: `/proc/self/fd/${fd}/${path.basename(socket)}`,
    release: () => {
      if (!released) closeSync(fd);
      released = true;
    },
  };
}

/** The token `npm run build` writes to dist/.stamp: a build of its own, whatever its files' times. */
const STAMP_TOKEN = /^[0-9a-f-]{8,64}$/;

/**
 * Which build of refinery this process runs. From dist/: the token in dist/.stamp. From the
 * sources: this file and its mtime. A rebuilt or another install differs.
 */
export function buildId(): string {
  const self = fileURLToPath(import.meta.url);
  const dist = self.lastIndexOf(`${path.sep}dist${path.sep}`);
  if (dist >= 0) {
    try {
      const token = readFileSync(path.join(self.slice(0, dist), 'dist', '.stamp'), 'utf8');
      if (STAMP_TOKEN.test(token)) return `dist:${token}`;
    } catch {
      // No stamp: named by the file, as from the sources.
    }
  }
  let mtime = 0;
  try {
    mtime = statSync(self).mtimeMs;
  } catch {
    // A file that cannot be stat'ed: the path alone.
  }
  return `${self}@${mtime}`;
}

/** Splits a byte stream into lines; calls `onLine` for each whole one, `onOverflow` when one grows past MAX_LINE. */
export function lineReader(onLine: (line: string) => void, onOverflow: () => void): (chunk: Buffer) => void {
  let buffered = '';
  return (chunk) => {
    buffered += chunk.toString('utf8');
    let at = buffered.indexOf('\n');
    while (at >= 0) {
      const line = buffered.slice(0, at);
      buffered = buffered.slice(at + 1);
      if (line.length > 0) onLine(line);
      at = buffered.indexOf('\n');
    }
    if (buffered.length > MAX_LINE) {
      buffered = '';
      onOverflow();
    }
  };
}
