import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { systemTool, toolPath } from './system-tools.ts';

/** Gate tests that start a broker with skipWithout(MOSQUITTO). */
export const MOSQUITTO = systemTool('mosquitto');

export interface MosquittoBroker {
  url: string;
  port: number;
  /** Stops the broker gracefully (SIGTERM), so it saves sessions to its persistence file. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same persistence file. */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
  readonly dir: string;
}

export interface MosquittoOptions {
  maxQueued?: number;
  /** Serve MQTT over TLS with these PEM files; requireCertificate asks clients for a certificate (mTLS). */
  tls?: { caFile: string; certFile: string; keyFile: string; requireCertificate?: boolean };
  /** A mosquitto_passwd file; anonymous clients are refused when it is set. */
  passwordFile?: string;
}

/** A real mosquitto on a free 127.0.0.1 port, with a generated config and persistence (sessions survive restarts). */
export async function startMosquitto(options: MosquittoOptions = {}): Promise<MosquittoBroker> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-mosquitto-'));
  const port = await freePort();
  const config = path.join(dir, 'mosquitto.conf');
  writeFileSync(
    config,
    [
      `listener ${port} 127.0.0.1`,
      // As EMQX and HiveMQ do by default: each message goes out at once (no Nagle delay).
      'set_tcp_nodelay true',
      `allow_anonymous ${options.passwordFile ? 'false' : 'true'}`,
      ...(options.passwordFile ? [`password_file ${options.passwordFile}`] : []),
      ...(options.tls
        ? [
            `cafile ${options.tls.caFile}`,
            `certfile ${options.tls.certFile}`,
            `keyfile ${options.tls.keyFile}`,
            `require_certificate ${options.tls.requireCertificate ? 'true' : 'false'}`,
          ]
        : []),
      'persistence true',
      `persistence_location ${dir}/`,
      'persistence_file mosquitto.db',
      'autosave_interval 0',
      `max_queued_messages ${options.maxQueued ?? 10000}`,
      'max_inflight_messages 0',
      `log_dest file ${path.join(dir, 'mosquitto.log')}`,
      'log_type error',
      'log_type warning',
      'user root',
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const proc = spawn(toolPath(MOSQUITTO), ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<never>((_, reject) => {
      proc.once('exit', (code) => reject(new Error(`mosquitto exited with ${code} before accepting connections: ${stderr}`)));
      proc.once('error', reject);
    });
    await Promise.race([waitForPort(port, 10_000), exited]);
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once('exit', () => resolve());
      proc.kill('SIGTERM');
    });
  };
  await start();
  return {
    url: `${options.tls ? 'mqtts' : 'mqtt'}://127.0.0.1:${port}`,
    port,
    dir,
    start,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    dispose: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port the OS just handed out on 127.0.0.1 (closed again before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once a TCP connection to the port succeeds; retries on ECONNREFUSED. */
function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`mosquitto did not accept connections on port ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}
