import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Command, CommandIo, DaemonServices } from '../command.ts';
import { terminalText } from '../terminal-text.ts';
import { describeFsError, isFsError } from '../../engine/state/write-problem.ts';
import type { WatchDaemon } from '../../engine/watch/watch-daemon.ts';
import type { EventSink } from '../../engine/events/bus.ts';
import { CookieBarrier } from '../../engine/watch/cookie-barrier.ts';
import {
  buildId,
  type ClientMessage,
  DAEMON_COMMANDS,
  type DaemonCommand,
  type DaemonMessage,
  daemonFolder,
  daemonSocket,
  lineReader,
  socketAddress,
} from './protocol.ts';

/** What the watch reports of the commands it serves. */
export type ServeNotice =
  | { kind: 'serving'; socket: string }
  | { kind: 'not-serving'; reason: string }
  | { kind: 'served'; command: DaemonCommand; exit: number }
  | { kind: 'fallback'; command: string; reason: string };

export interface DaemonServer {
  close(): Promise<void>;
}

type Request = Extract<ClientMessage, { type: 'request' }>;

/** The commands a watch answers, loaded as main() loads them (not through commands.ts, which loads the watch). */
const SERVED: Record<DaemonCommand, () => Promise<Command>> = {
  run: async () => (await import('../commands/run.ts')).runCommand,
  plan: async () => (await import('../commands/plan.ts')).planCommand,
  status: async () => (await import('../commands/status.ts')).statusCommand,
};

/** The folder for the socket, owner-only; a reason when it cannot be made so. */
function ownerOnlyFolder(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.isSymbolicLink()) return `${dir} is not a folder`;
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return `${dir} belongs to another user`;
    chmodSync(dir, 0o700);
    return undefined;
  } catch (error) {
    return `${dir}: ${(error as Error).message}`;
  }
}

function parseRequest(line: string): Request | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const r = value as Partial<Request> | null;
  if (r?.type !== 'request' || typeof r.build !== 'string') return undefined;
  if (!DAEMON_COMMANDS.includes(r.command as DaemonCommand)) return undefined;
  if (!Array.isArray(r.argv) || r.argv.length > 10_000 || !r.argv.every((a) => typeof a === 'string')) return undefined;
  if (typeof r.workdir !== 'string' || !path.isAbsolute(r.workdir)) return undefined;
  if (typeof r.stdout !== 'object' || r.stdout === null || typeof r.stdout.tty !== 'boolean') return undefined;
  if (r.stdout.columns !== undefined && !(Number.isInteger(r.stdout.columns) && r.stdout.columns > 0)) return undefined;
  const env = r.env ?? {};
  if (typeof env !== 'object' || Object.values(env).some((v) => v !== undefined && typeof v !== 'string')) return undefined;
  return r as Request;
}

function isInterrupt(line: string): boolean {
  try {
    return (JSON.parse(line) as { type?: unknown } | null)?.type === 'interrupt';
  } catch {
    return false;
  }
}

/** A stream that forwards what is written to the client as `out`/`err` lines. */
function forwarder(socket: net.Socket, type: 'out' | 'err', tty: boolean, columns?: number): CommandIo['stdout'] {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      send(socket, { type, data: terminalText(String(chunk)) });
      callback();
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (tty) stream.isTTY = true;
  if (columns !== undefined) stream.columns = columns;
  return stream;
}

function send(socket: net.Socket, message: DaemonMessage): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
}

/**
 * Serves `refinery run`, `plan` and `status` for clients in the same project, from inside the
 * watch: the command is the same code, run in this process, with its output sent to the client.
 * A run waits for the watch's own run to end and holds the watch's runs back while it goes; it
 * starts after a barrier behind every change made before it was asked, so the watcher's record
 * of changes can stand in for stat'ing every file the last run looked at.
 */
export async function serveDaemon(options: {
  root: string;
  daemon: WatchDaemon;
  baseIo: Pick<CommandIo, 'env'>;
  /** The watch's sinks that should see the runs it answers too (MQTT, the dashboard). */
  sinks(): EventSink[];
  notify(notice: ServeNotice): void;
}): Promise<DaemonServer | undefined> {
  const { root, daemon } = options;
  const folder = daemonFolder(root);
  const socketPath = daemonSocket(root);
  const problem = ownerOnlyFolder(folder);
  if (problem) {
    options.notify({ kind: 'not-serving', reason: problem });
    return undefined;
  }
  const named = socketAddress(socketPath);
  if (!named) {
    options.notify({ kind: 'not-serving', reason: `no name for the socket ${socketPath} fits a unix socket address` });
    return undefined;
  }
  // This process holds the project lock: a socket left here is a dead watch's.
  rmSync(socketPath, { force: true });
  let barrier: CookieBarrier;
  try {
    barrier = new CookieBarrier(folder);
  } catch (error) {
    // The system refused the watch (the limit of inotify watches): the watch goes on, unasked.
    named.release();
    const code = (error as NodeJS.ErrnoException).code;
    const hint = code === 'ENOSPC' ? ' (the limit of inotify watches is reached: raise fs.inotify.max_user_watches)' : '';
    options.notify({ kind: 'not-serving', reason: `cannot watch ${folder}: ${(error as Error).message}${hint}` });
    return undefined;
  }
  const { trust } = daemon;
  const build = buildId();
  const connections = new Set<net.Socket>();

  const serve = async (socket: net.Socket, request: Request, interrupts: { count: number; on?: () => void }): Promise<void> => {
    if (request.build !== build) return fallback(socket, request.command, 'it runs another build of refinery');
    const busy = daemon.busy();
    if (request.command !== 'run' && busy.length > 0) return fallback(socket, request.command, `it is running ${busy.join(', ')}`);
    send(socket, { type: 'accepted' });
    const stdout = forwarder(socket, 'out', request.stdout.tty, request.stdout.columns);
    const stderr = forwarder(socket, 'err', false);
    if (busy.length > 0) stderr.write(`refinery: the watch is running ${busy.join(', ')}; this run starts when that one ends\n`);
    const work = async (services: DaemonServices | undefined): Promise<number> => {
      const interrupt = new AbortController();
      const force = new AbortController();
      interrupts.on = () => (interrupts.count === 1 ? interrupt.abort('SIGINT') : force.abort('SIGINT'));
      if (interrupts.count > 0) interrupt.abort('SIGINT');
      socket.once('close', () => {
        interrupt.abort('SIGINT');
        force.abort('SIGINT');
      });
      const env = { ...options.baseIo.env, CI: request.env.CI, NO_COLOR: request.env.NO_COLOR };
      for (const key of ['CI', 'NO_COLOR'] as const) if (env[key] === undefined) delete env[key];
      const io: CommandIo = {
        stdout,
        stderr,
        cwd: root,
        workdir: request.workdir,
        env,
        signal: interrupt.signal,
        forceSignal: force.signal,
        ...(services ? { daemon: services } : {}),
      };
      const command = await SERVED[request.command]();
      try {
        return await command.run(request.argv, io);
      } catch (error) {
        // As main() does: the machine's trouble (a full disk) in one line; a bug in one line too,
        // without taking the watch down.
        if (isFsError(error)) stderr.write(`refinery: error: ${describeFsError(error, root)}\n`);
        else stderr.write(`refinery: internal error in the watch daemon: ${(error as Error).message}\n`);
        return 1;
      }
    };
    const code =
      request.command === 'run'
        ? await daemon.exclusive(async () => {
            const synced = await barrier.sync();
            const epoch = daemon.ledger.epochTaken();
            return work({
              stageState: (pipeline) => daemon.stageStateOf(pipeline),
              hashes: daemon.hashes,
              runners: daemon.runners,
              sinks: options.sinks(),
              holdsLock: true,
              epoch,
              vouch: (file) => (synced ? trust.vouch(file) : undefined),
              recordHolds: (file, at, update) => trust.recordHolds(file, at, update),
            });
          })
        : await work(undefined);
    send(socket, { type: 'exit', code });
    options.notify({ kind: 'served', command: request.command, exit: code });
    socket.end();
  };

  const fallback = (socket: net.Socket, command: string, reason: string): void => {
    send(socket, { type: 'fallback', reason });
    options.notify({ kind: 'fallback', command, reason });
    socket.end();
  };

  const server = net.createServer((socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    socket.on('error', () => socket.destroy());
    const interrupts: { count: number; on?: () => void } = { count: 0 };
    let started = false;
    socket.on(
      'data',
      lineReader(
        (line) => {
          if (started) {
            if (isInterrupt(line)) {
              interrupts.count += 1;
              interrupts.on?.();
            }
            return;
          }
          started = true;
          const request = parseRequest(line);
          if (!request) {
            fallback(socket, 'unknown', 'the request was not understood');
            return;
          }
          serve(socket, request, interrupts).catch((error: unknown) => {
            send(socket, { type: 'err', data: `refinery: internal error in the watch daemon: ${(error as Error).message}\n` });
            send(socket, { type: 'exit', code: 1 });
            socket.end();
          });
        },
        () => socket.destroy(),
      ),
    );
  });
  const listening = await new Promise<string | undefined>((resolve) => {
    server.once('error', (error) => resolve(error.message));
    server.listen(named.address, () => resolve(undefined));
  });
  if (listening !== undefined) {
    named.release();
    barrier.close();
    options.notify({ kind: 'not-serving', reason: `cannot listen on ${socketPath}: ${listening}` });
    return undefined;
  }
  chmodSync(socketPath, 0o600);
  options.notify({ kind: 'serving', socket: socketPath });
  return {
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of connections) s.destroy();
      });
      named.release();
      barrier.close();
      rmSync(socketPath, { force: true });
    },
  };
}
