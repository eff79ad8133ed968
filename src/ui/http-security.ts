// The dashboard's door: a per-start token (URL once, then an HttpOnly SameSite=Strict cookie), a
// Host allow-list against DNS rebinding, and Origin / Sec-Fetch-Site checks on every mutation and
// event stream. Pure functions over the request's headers; the server decides what to answer.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** A fresh secret for one start of the server (as Jupyter's): 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Compares in constant time: both sides are hashed first, so their lengths never leak either. */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined || given.length === 0) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Cookies ignore ports: each server's cookie is named after its port, so two dashboards do not clash. */
export function cookieName(port: number): string {
  return `refinery-ui-${port}`;
}

export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function tokenCookie(port: number, token: string): string {
  return `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The `host:port` values a request's Host header may carry: loopback names, plus an explicit --host. */
export function allowedHosts(port: number, extraHost?: string): Set<string> {
  const names = [...LOOPBACK_NAMES];
  if (extraHost && !isLoopbackHost(extraHost))
    names.push(extraHost.includes(':') && !extraHost.startsWith('[') ? `[${extraHost}]` : extraHost);
  return new Set(names.map((n) => `${n}:${port}`.toLowerCase()));
}

/** DNS rebinding: a page of evil.test resolved to 127.0.0.1 still sends `Host: evil.test`. */
export function hostAllowed(headers: IncomingHttpHeaders, allowed: ReadonlySet<string>): boolean {
  const host = headers.host;
  return typeof host === 'string' && allowed.has(host.toLowerCase());
}

/**
 * For mutations and the event stream: the request must come from one of the dashboard's own pages.
 * `requireOrigin` (mutations): an Origin header must be present. Sec-Fetch-Site, when the browser
 * sends it, must say same-origin (or none: typed into the address bar).
 */
export function sameOriginRequest(headers: IncomingHttpHeaders, allowed: ReadonlySet<string>, requireOrigin: boolean): boolean {
  const site = headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') return false;
  const origin = headers.origin;
  if (origin === undefined) return !requireOrigin;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (
    url.protocol === 'http:' && allowed.has(url.host.toLowerCase()) && url.host.toLowerCase() === String(headers.host ?? '').toLowerCase()
  );
}

/**
 * Headers on every answer: no framing (clickjacking), a strict CSP (scripts only from the server
 * itself, no inline script, no eval; inline styles for Mermaid's SVGs), no sniffing, no referrer
 * (the token never leaves in a Referer). Never an Access-Control-Allow-Origin.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self'",
    "frame-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
  ].join('; '),
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** Raw project files are shown as text in a sandbox: even an HTML file cannot run a script. */
export const RAW_FILE_CSP = "sandbox; default-src 'none'; frame-ancestors 'self'";
