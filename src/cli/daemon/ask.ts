import { lstatSync } from 'node:fs';
import net from 'node:net';
import {
  buildId,
  type ClientMessage,
  type DaemonCommand,
  type DaemonMessage,
  daemonFolder,
  daemonSocket,
  lineReader,
  socketAddress,
} from './protocol.ts';
import { workingFolder } from '../../engine/paths/working-folder.ts';

export interface AskIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  forceSignal: AbortSignal;
}

/** The daemon ran the command (its exit code), or the client checks by itself (and why). */
export type Answer = { exit: number } | { fallback: string };

/** How long a daemon has to say whether it takes the request. */
const ACCEPT_TIMEOUT_MS = 5000;

/** Where this process was started; the root's parent path when that folder is gone (relative paths then fail as they would). */
function workdir(): string {
  return workingFolder() ?? '/';
}

/** Only a folder of our own, that no one else can enter, may hold the socket we trust. */
function folderProblem(dir: string): string | undefined {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.isSymbolicLink()) return 'its folder is not a folder';
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return 'its folder belongs to another user';
    if ((st.mode & 0o077) !== 0) return 'its folder is open to other users';
    return undefined;
  } catch {
    return 'no daemon';
  }
}

/**
 * Asks the project's running `refinery watch` to run a command. Falls back (the caller checks
 * by itself) when there is no daemon, it is another build, busy with a run (for plan and
 * status), or does not answer in time; once accepted, the daemon's output and exit code are
 * the command's.
 */
export function askDaemon(root: string, command: DaemonCommand, argv: readonly string[], io: AskIo): Promise<Answer> {
  const problem = folderProblem(daemonFolder(root));
  if (problem) return Promise.resolve({ fallback: problem });
  const named = socketAddress(daemonSocket(root));
  if (!named) return Promise.resolve({ fallback: 'no name for its socket fits a unix socket address' });
  return new Promise<Answer>((resolve) => {
    // A reader that went away (`refinery status | head -3`) ends the output, not the process.
    const open = { out: true, err: true };
    const closed = (which: 'out' | 'err') => (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') open[which] = false;
    };
    // Left in place: a write under way when the answer ends may still fail with EPIPE.
    io.stdout.on('error', closed('out'));
    io.stderr.on('error', closed('err'));
    let accepted = false;
    let settled = false;
    const socket = net.connect(named.address);
    const finish = (answer: Answer): void => {
      if (settled) return;
      settled = true;
      named.release();
      clearTimeout(timer);
      io.signal.removeEventListener('abort', interrupt);
      io.forceSignal.removeEventListener('abort', interrupt);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => {
      if (!accepted) finish({ fallback: 'the daemon did not answer' });
    }, ACCEPT_TIMEOUT_MS);
    const interrupt = (): void => {
      const message: ClientMessage = { type: 'interrupt' };
      socket.write(`${JSON.stringify(message)}\n`);
    };
    io.signal.addEventListener('abort', interrupt, { once: true });
    io.forceSignal.addEventListener('abort', interrupt, { once: true });
    socket.on('error', (error) => {
      if (!accepted) finish({ fallback: `no daemon (${(error as NodeJS.ErrnoException).code ?? error.message})` });
      else {
        io.stderr.write(`refinery: the watch daemon went away during the ${command} (${error.message})\n`);
        finish({ exit: 1 });
      }
    });
    socket.on('close', () => {
      if (settled) return;
      if (!accepted) finish({ fallback: 'the daemon closed the connection' });
      else {
        io.stderr.write(`refinery: the watch daemon went away during the ${command}\n`);
        finish({ exit: 1 });
      }
    });
    socket.on(
      'data',
      lineReader(
        (line) => {
          let message: DaemonMessage;
          try {
            message = JSON.parse(line) as DaemonMessage;
          } catch {
            return;
          }
          if (message.type === 'accepted') accepted = true;
          else if (message.type === 'fallback') finish({ fallback: String(message.reason) });
          else if (message.type === 'out') {
            if (open.out) io.stdout.write(String(message.data));
          } else if (message.type === 'err') {
            if (open.err) io.stderr.write(String(message.data));
          } else if (message.type === 'exit' && Number.isInteger(message.code)) finish({ exit: message.code });
        },
        () => socket.destroy(),
      ),
    );
    socket.once('connect', () => {
      named.release();
      const request: ClientMessage = {
        type: 'request',
        build: buildId(),
        command,
        argv: [...argv],
        workdir: workdir(),
        stdout: { tty: Boolean(io.stdout.isTTY), ...(io.stdout.columns ? { columns: io.stdout.columns } : {}) },
        env: {
          ...(io.env.CI !== undefined ? { CI: io.env.CI } : {}),
          ...(io.env.NO_COLOR !== undefined ? { NO_COLOR: io.env.NO_COLOR } : {}),
        },
      };
      socket.write(`${JSON.stringify(request)}\n`);
    });
  });
}
