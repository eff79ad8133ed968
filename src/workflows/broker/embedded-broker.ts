// aedes enters the project here and nowhere else.
import net from 'node:net';
import { Aedes, type Client } from 'aedes';
import { TopicGuards, type GuardTopics, type TopicLogin } from './topic-guard.ts';

export interface EmbeddedBroker {
  /** `mqtt://HOST:PORT`. */
  url: string;
  port: number;
  host: string;
  /** Admits to the topics under a prefix only the clients that log in with the given username and password. */
  guard: GuardTopics;
  close(): Promise<void>;
}

export interface EmbeddedBrokerOptions {
  /** Defaults to 127.0.0.1; anything else must be asked for explicitly. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
}

/** An in-process MQTT 3.1.1 broker (aedes) on a TCP port, for the duration of a command or a test. */
export async function startEmbeddedBroker(options: EmbeddedBrokerOptions = {}): Promise<EmbeddedBroker> {
  const host = options.host ?? '127.0.0.1';
  const guards = new TopicGuards();
  const aedes = await Aedes.createBroker(guardedHandlers(guards));
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    aedes.handle(socket);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`cannot start the embedded MQTT broker on ${host}:${options.port ?? 0}: ${code ?? String(error)}`);
  }
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('embedded broker has no TCP address');
  const port = address.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `mqtt://${urlHost}:${port}`,
    port,
    host,
    guard: guards.protect,
    close() {
      closing ??= new Promise<void>((resolve) => {
        aedes.close(() => {
          server.close(() => resolve());
          // Connections aedes already closed may linger half-open; do not wait on them.
          for (const socket of sockets) socket.destroy();
        });
      });
      return closing;
    },
  };
}

/** aedes hooks that enforce the guards; anonymous clients are welcome everywhere else. */
function guardedHandlers(guards: TopicGuards) {
  const logins = new WeakMap<Client, TopicLogin>();
  const loginOf = (client: Client | null): TopicLogin | undefined => (client ? logins.get(client) : undefined);
  return {
    authenticate(
      client: Client,
      username: string | undefined,
      password: Buffer | undefined,
      done: (error: null, success: boolean) => void,
    ) {
      if (username !== undefined) logins.set(client, { username, password: password?.toString('utf8') ?? '' });
      done(null, true);
    },
    authorizePublish(client: Client | null, packet: { topic: string }, done: (error?: Error | null) => void) {
      if (packet.topic.startsWith('$SYS')) return done(new Error('$SYS topic is reserved'));
      // MQTT 3.1.1 has no negative PUBACK: aedes drops the client, the message goes nowhere.
      done(guards.allows(loginOf(client), packet.topic) ? null : new Error(`not authorized to publish on ${packet.topic}`));
    },
    authorizeSubscribe<S extends { topic: string }>(
      client: Client,
      subscription: S,
      done: (error: Error | null, subscription?: S | null) => void,
    ) {
      // null: a SUBACK that refuses this one filter (0x80); the client stays connected.
      done(null, guards.allowsFilter(loginOf(client), subscription.topic) ? subscription : null);
    },
    authorizeForward<P extends { topic: string }>(client: Client, packet: P): P | null {
      return guards.allows(loginOf(client), packet.topic) ? packet : null;
    },
  };
}
