// The dashboard's HTTP server (node:http, no framework): the security checks on every request, the
// page and its scripts, project files as text, the JSON API and the event stream.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Asset } from './assets.ts';
import { vendorAsset } from './assets.ts';
import { handleApi, type ApiContext } from './api-routes.ts';
import { HttpError, intParam, sendJson, sendText } from './http-reply.ts';
import {
  cookieName,
  cookieValue,
  hostAllowed,
  RAW_FILE_CSP,
  sameOriginRequest,
  SECURITY_HEADERS,
  tokenCookie,
  tokenMatches,
} from './http-security.ts';
import { resolveInProject } from './safe-path.ts';
import { servedToPages } from './file-policy.ts';
import { redactSecrets } from '../security/known-secrets.ts';
import { resumePoint, serveEventStream } from './sse.ts';
import { readPiece } from './file-piece.ts';

export interface ServerSecurity {
  token: string;
  port: number;
  /** `host:port` values a Host (and an Origin) may carry. */
  allowed: ReadonlySet<string>;
}

export interface UiServerOptions {
  api: ApiContext;
  assets: ReadonlyMap<string, Asset>;
  /** Read on every request: the port (and so the allowed hosts) is known only once listening. */
  security: () => ServerSecurity;
}

const FILE_CHUNK = 1024 * 1024;

const UNAUTHORIZED =
  "401 Unauthorized: open the dashboard with the URL `refinery ui` printed (it holds this start's token); `refinery ui list` prints it again.";

function sendAsset(res: ServerResponse, asset: Asset, cache: string): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': asset.type,
    'Content-Length': String(asset.body.length),
    'Cache-Control': cache,
  });
  res.end(asset.body);
}

/**
 * A project file as plain text in a sandbox, a range at a time (`?offset=&length=`), never as HTML,
 * cleaned of secrets like every API answer. A range ends at a line break (X-Range says where), so a
 * key is redacted whole; refinery's own state files are not served at all (file-policy.ts).
 */
function sendProjectFile(res: ServerResponse, root: string, rawPath: string, url: URL): void {
  const found = resolveInProject(root, rawPath, { decode: true, kind: 'file' });
  if (!found || !servedToPages(found.rel.split('/'))) return sendText(res, 404, '404 Not Found');
  const offset = intParam(url, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const length = intParam(url, 'length', FILE_CHUNK, 1, FILE_CHUNK);
  const piece = offset >= found.size ? { start: found.size, bytes: Buffer.alloc(0) } : readPiece(found.abs, offset, length, found.size);
  const end = piece.start + piece.bytes.length;
  const body = Buffer.from(redactSecrets(piece.bytes.toString('utf8')));
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Security-Policy': RAW_FILE_CSP,
    'X-Frame-Options': 'SAMEORIGIN',
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Total-Bytes': String(found.size),
    'X-Range': `${piece.start}-${end}`,
    // Past the range the page says so and offers the next one: a 100 MB log never loads whole.
    ...(end < found.size ? { 'X-Truncated': 'true' } : {}),
  });
  res.end(body);
}

async function route(options: UiServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const security = options.security();
  if (!hostAllowed(req.headers, security.allowed))
    return sendText(res, 403, '403 Forbidden: this Host header is not the dashboard (DNS rebinding guard)');
  const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
  const queryToken = url.searchParams.get('token') ?? undefined;
  const viaQuery = tokenMatches(queryToken, security.token);
  if (!viaQuery && !tokenMatches(cookieValue(req.headers, cookieName(security.port)), security.token))
    return sendText(res, 401, UNAUTHORIZED);
  const method = req.method ?? 'GET';
  const mutation = method !== 'GET' && method !== 'HEAD';
  if (mutation && !sameOriginRequest(req.headers, security.allowed, true))
    return sendText(res, 403, "403 Forbidden: changes are accepted only from the dashboard's own pages (Origin / Sec-Fetch-Site)");
  if (viaQuery && !mutation && (url.pathname === '/' || url.pathname === '/index.html')) {
    // The token leaves the address bar (and the history) for an HttpOnly, SameSite=Strict cookie.
    url.searchParams.delete('token');
    const rest = url.searchParams.toString();
    res.writeHead(302, {
      ...SECURITY_HEADERS,
      'Set-Cookie': tokenCookie(security.port, security.token),
      Location: `${url.pathname}${rest ? `?${rest}` : ''}`,
      'Cache-Control': 'no-store',
    });
    res.end();
    return;
  }
  const p = url.pathname;
  if (!mutation) {
    if (p === '/' || p === '/index.html') {
      const page = options.assets.get('index.html');
      return page ? sendAsset(res, page, 'no-store') : sendText(res, 500, 'the front end is missing');
    }
    if (p.startsWith('/assets/')) {
      const asset = options.assets.get(p.slice('/assets/'.length));
      return asset ? sendAsset(res, asset, 'no-cache') : sendText(res, 404, '404 Not Found');
    }
    if (p.startsWith('/vendor/')) {
      const asset = vendorAsset(p.slice('/vendor/'.length));
      return asset ? sendAsset(res, asset, 'private, max-age=86400') : sendText(res, 404, '404 Not Found');
    }
    // The raw request path: `..` and `%2e%2e` are checked segment by segment, before any normalizing.
    const rawPath = (req.url ?? '').split('?')[0] ?? '';
    if (rawPath.startsWith('/files/')) return sendProjectFile(res, options.api.root, rawPath.slice('/files/'.length), url);
    if (p === '/api/events') {
      if (!sameOriginRequest(req.headers, security.allowed, false))
        return sendText(res, 403, "403 Forbidden: the event stream is only for the dashboard's own pages");
      return serveEventStream(req, res, options.api.hub, resumePoint(req, url), SECURITY_HEADERS as Record<string, string>);
    }
  }
  if (p.startsWith('/api/') && (await handleApi(options.api, req, res, url))) return;
  return sendText(res, 404, '404 Not Found');
}

export function createUiServer(options: UiServerOptions): Server {
  return createServer((req, res) => {
    route(options, req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpError) return sendJson(req, res, error.status, { error: error.message });
      if (error instanceof URIError) return sendJson(req, res, 400, { error: 'a malformed %-escape in the address' });
      sendJson(req, res, 500, { error: `internal error: ${(error as Error).message}` });
    });
  });
}
