// A real nginx serving the Bazel HTTP cache protocol through its WebDAV module (PUT creates the
// ac/ and cas/ folders), on a free 127.0.0.1 port, owned by the test: `daemon off` and
// `master_process off` keep it one child process, its pid file, logs and temp folders live in a
// temp folder, and stop() ends it. The access log has one "METHOD URI STATUS USER X-CACHE-TOKEN"
// line per request.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './mosquitto.ts';
import { systemTool, toolPath } from './system-tools.ts';

/** Gate tests that start nginx with skipWithout(NGINX). */
export const NGINX = systemTool('nginx');

export interface NginxCacheOptions {
  /** Writes (everything but GET and HEAD) need these Basic credentials; reads stay anonymous. */
  writers?: { user: string; password: string };
  /** client_max_body_size (nginx answers 413 above it). */
  maxBody?: string;
}

export interface NginxCache {
  /** http://127.0.0.1:PORT (the cache's base URL). */
  url: string;
  port: number;
  /** The folder nginx serves: entries are <root>/ac/<key> and <root>/cas/<sha256>. */
  root: string;
  /** Requests so far, oldest first. */
  requests(): Array<{ method: string; uri: string; status: number; user: string; token: string }>;
  stop(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}

function config(dir: string, port: number, options: NginxCacheOptions): string {
  const auth = options.writers ? `limit_except GET HEAD { auth_basic "refinery-cache"; auth_basic_user_file ${dir}/htpasswd; }` : '';
  return `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  log_format cache '$request_method $uri $status $remote_user $http_x_cache_token';
  access_log ${dir}/access.log cache;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  server {
    listen 127.0.0.1:${port};
    location / {
      root ${dir}/root;
      dav_methods PUT DELETE MKCOL;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
      client_max_body_size ${options.maxBody ?? '64m'};
      default_type application/octet-stream;
      ${auth}
    }
  }
}
`;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.setTimeout(1000, () => {
      req.destroy();
      resolve(false);
    });
  });
}

export async function startNginxCache(options: NginxCacheOptions = {}): Promise<NginxCache> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-nginx-'));
  const root = path.join(dir, 'root');
  mkdirSync(root, { recursive: true });
  mkdirSync(path.join(dir, 'tmp'), { recursive: true });
  // nginx's {PLAIN} scheme: no crypt(3) needed to make the file.
  if (options.writers) writeFileSync(path.join(dir, 'htpasswd'), `${options.writers.user}:{PLAIN}${options.writers.password}\n`);
  const port = await freePort();
  writeFileSync(path.join(dir, 'nginx.conf'), config(dir, port, options));
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const proc = spawn(toolPath(NGINX), ['-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const deadline = Date.now() + 10_000;
    while (!(await answers(port))) {
      if (proc.exitCode !== null)
        throw new Error(
          `nginx exited with ${proc.exitCode}: ${stderr}${existsSync(path.join(dir, 'error.log')) ? readFileSync(path.join(dir, 'error.log'), 'utf8') : ''}`,
        );
      if (Date.now() > deadline) throw new Error(`nginx did not answer on port ${port} within 10 s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    // TERM: a fast shutdown that also closes idle keep-alive connections.
    proc.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    root,
    requests: () => {
      const file = path.join(dir, 'access.log');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [method = '', uri = '', status = '0', user = '-', token = '-'] = line.split(' ');
          return { method, uri, status: Number(status), user, token };
        });
    },
    stop,
    start,
    dispose: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
