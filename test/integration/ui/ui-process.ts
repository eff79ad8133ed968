// A running `refinery ui` (or `refinery watch --ui`) child process, its URL and token, and raw
// HTTP requests against it (paths sent exactly as written: `..` and `%2e%2e` reach the server).
import type { ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { startCli } from '../../helpers/project.ts';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export class UiProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  url = '';
  readonly ready: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(args: readonly string[], cwd: string, options: { urlOn?: 'stdout' | 'stderr'; env?: NodeJS.ProcessEnv } = {}) {
    this.child = startCli(args, { cwd, ...(options.env ? { env: options.env } : {}) });
    const pattern = /(http:\/\/[^\s]+\/\?token=[A-Za-z0-9_~.-]+)/;
    this.ready = new Promise((resolve, reject) => {
      const look = (): void => {
        const text = options.urlOn === 'stderr' ? this.stderr : this.stdout;
        const m = pattern.exec(text);
        if (m && !this.url) {
          this.url = m[1] as string;
          resolve();
        }
      };
      this.child.stdout?.on('data', (d: Buffer) => {
        this.stdout += d.toString();
        look();
      });
      this.child.stderr?.on('data', (d: Buffer) => {
        this.stderr += d.toString();
        look();
      });
      this.child.on('close', (code) =>
        reject(new Error(`refinery exited (${code}) before printing its URL\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`)),
      );
    });
    this.exited = new Promise((resolve) => this.child.on('close', (code, signal) => resolve({ code, signal })));
  }

  get base(): string {
    return this.url.slice(0, this.url.indexOf('/?token='));
  }

  get token(): string {
    return this.url.slice(this.url.indexOf('token=') + 'token='.length);
  }

  get port(): number {
    return Number(new URL(this.base).port);
  }

  get cookie(): string {
    return `refinery-ui-${this.port}=${this.token}`;
  }

  /** A request with the path sent as given; `auth: true` adds the token cookie. */
  request(
    path: string,
    options: { method?: string; headers?: Record<string, string>; body?: string; auth?: boolean } = {},
  ): Promise<HttpAnswer> {
    const url = new URL(this.base);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path,
          method: options.method ?? 'GET',
          headers: { ...(options.auth ? { Cookie: this.cookie } : {}), ...(options.headers ?? {}) },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            body += d;
            // The event stream never ends: the first frames are enough.
            if (String(res.headers['content-type']).startsWith('text/event-stream') && body.includes('\n\n')) req.destroy();
          });
          const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          res.on('end', done);
          res.on('close', done);
        },
      );
      req.on('error', (error) => {
        if ((error as NodeJS.ErrnoException).code === 'ECONNRESET') return;
        reject(error);
      });
      if (options.body !== undefined) req.write(options.body);
      req.end();
    });
  }

  /**
   * Reads the event stream (from `since`, default the start of the server's buffer) until a message
   * passes `test`; resolves with it. Frames are `id:`, `event:` and `data:` lines;
   * each message is its data with `frame`, the frame's event name (run-event, changed, hello, reset).
   */
  nextEvent(
    test: (message: Record<string, any>) => boolean,
    options: { since?: number; lastEventId?: number; timeoutMs?: number; collect?: Array<Record<string, any>> } = {},
  ): Promise<Record<string, any>> {
    const url = new URL(this.base);
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { Cookie: this.cookie };
      if (options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: `/api/events${options.lastEventId === undefined ? `?since=${options.since ?? 0}` : ''}`,
          headers,
        },
        (res) => {
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            buffer += d;
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const frame = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const data = frame
                .split('\n')
                .filter((l) => l.startsWith('data: '))
                .map((l) => l.slice(6))
                .join('\n');
              const event = /^event: (.*)$/m.exec(frame)?.[1];
              if (!data) continue;
              const message = { frame: event, ...(JSON.parse(data) as Record<string, any>) };
              options.collect?.push(message);
              if (test(message)) {
                clearTimeout(timer);
                req.destroy();
                resolve(message);
                return;
              }
            }
          });
        },
      );
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error(`no matching event within ${options.timeoutMs ?? 30_000} ms\nstderr:\n${this.stderr}`));
      }, options.timeoutMs ?? 30_000);
      req.on('error', (error) => {
        if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
      });
      req.end();
    });
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
    return this.exited;
  }
}
