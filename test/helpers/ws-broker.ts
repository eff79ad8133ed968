import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { Aedes } from 'aedes';
import { createWebSocketStream, WebSocketServer } from 'ws';

export interface WsBroker {
  /** `ws://127.0.0.1:PORT/mqtt` or `wss://…`. */
  url: string;
  close(): Promise<void>;
}

/** A real MQTT broker (aedes) served over WebSocket on 127.0.0.1, at /mqtt; over TLS when given a certificate. */
export async function startWsBroker(tls?: { certFile: string; keyFile: string }): Promise<WsBroker> {
  const aedes = await Aedes.createBroker();
  const server: Server = tls ? createHttpsServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }) : createHttpServer();
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const wss = new WebSocketServer({ server, path: '/mqtt' });
  wss.on('connection', (socket) => aedes.handle(createWebSocketStream(socket) as never));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${tls ? 'wss' : 'ws'}://127.0.0.1:${port}/mqtt`,
    close: () =>
      new Promise<void>((resolve) => {
        aedes.close(() => {
          wss.close();
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        });
      }),
  };
}
