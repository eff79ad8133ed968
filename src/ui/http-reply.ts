// Small helpers to answer: JSON with an ETag (a page polling an unchanged list gets a 304), plain
// text for errors, and query parameters read with bounds.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { redactSecretsDeep } from '../security/known-secrets.ts';
import { SECURITY_HEADERS } from './http-security.ts';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function sendText(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...extra });
  res.end(`${text}\n`);
}

/** JSON, secrets redacted (whatever a log or an artifact holds), with an ETag for cheap refreshes. */
export function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  data: unknown,
  extra: Record<string, string> = {},
): void {
  const body = Buffer.from(JSON.stringify(redactSecretsDeep(data)));
  const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
  const headers = {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Cache-Control': 'no-cache',
    ETag: etag,
    ...extra,
  };
  if (status === 200 && req.headers['if-none-match'] === etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(status, { ...headers, 'Content-Length': String(body.length) });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function intParam(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d{1,9}$/.test(raw)) throw new HttpError(400, `${name}=${raw}: expected a whole number`);
  return Math.min(max, Math.max(min, Number(raw)));
}

export function stringParam(url: URL, name: string, maxLength = 512): string {
  const value = url.searchParams.get(name) ?? '';
  if (value.length > maxLength) throw new HttpError(400, `${name}: at most ${maxLength} characters`);
  return value;
}

/** A small JSON request body (actions), refused past 64 KB. */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = String(req.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) throw new HttpError(415, 'send the body as application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 65_536) throw new HttpError(413, 'the body is over 64 KB');
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpError(400, 'the body must be a JSON object');
  return value as Record<string, unknown>;
}
