// aedes enters the project here and nowhere else.
import net from 'node:net';
import { Aedes } from 'aedes';

export interface EmbeddedBroker {
  /** `mqtt://HOST:PORT`. */
  url: string;
  port: number;
  host: string;
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
  const aedes = await Aedes.createBroker();
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
