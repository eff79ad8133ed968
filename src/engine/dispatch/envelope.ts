// Messages between a coordinator and its workers are signed: HMAC-SHA256, keyed by the shared
// REFINERY_WORKER_KEY, over the RFC 8785 canonical JSON of everything but the signature. A
// message is taken only when its signature holds, it is recent, and its nonce was not seen
// before: an unsigned, tampered or replayed message is refused and said why, never acted on.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { canonicalize, canonicalProblem } from '../../security/jcs.ts';
import { rememberSecret } from '../../security/known-secrets.ts';

export const WORKER_KEY_ENV = 'REFINERY_WORKER_KEY';
/** Shorter keys are refused: an HMAC key must not be guessable. */
export const MIN_KEY_LENGTH = 32;
/** Names the protocol inside what is signed, so a signature made for something else never fits. */
const PROTOCOL = 'refinery-workers/1';
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

export interface Envelope<T> {
  proto: typeof PROTOCOL;
  /** Who sent it: a worker's name, or `coordinator`. */
  from: string;
  nonce: string;
  /** Milliseconds since the epoch, as the sender's clock had it. */
  at: number;
  body: T;
  /** Hex HMAC-SHA256 over the canonical JSON of the other fields. */
  sig: string;
}

/** The key from the environment, registered for redaction; or why it cannot be used. */
export function workerKey(env: NodeJS.ProcessEnv): { key: Buffer } | { error: string } {
  const value = env[WORKER_KEY_ENV];
  if (!value)
    return {
      error: `${WORKER_KEY_ENV} is not set: the coordinator and its workers sign every message with it; set the same secret (at least ${MIN_KEY_LENGTH} characters, e.g. \`openssl rand -hex 32\`) on each machine`,
    };
  if (value.length < MIN_KEY_LENGTH)
    return { error: `${WORKER_KEY_ENV} is ${value.length} characters; use at least ${MIN_KEY_LENGTH} (e.g. \`openssl rand -hex 32\`)` };
  rememberSecret(value);
  return { key: Buffer.from(value, 'utf8') };
}

function mac(key: Buffer, unsigned: Omit<Envelope<unknown>, 'sig'>): string {
  return createHmac('sha256', key).update(canonicalize(unsigned), 'utf8').digest('hex');
}

/** The message's text, signed. */
export function seal<T>(key: Buffer, from: string, body: T, now = Date.now()): string {
  const problem = canonicalProblem(body, '');
  if (problem) throw new Error(`internal: a worker message cannot be signed: ${problem}`);
  const unsigned = { proto: PROTOCOL as typeof PROTOCOL, from, nonce: randomBytes(18).toString('base64url'), at: now, body };
  return JSON.stringify({ ...unsigned, sig: mac(key, unsigned) });
}

export type Opened = { ok: true; from: string; body: unknown; nonce: string } | { ok: false; reason: string };

/**
 * Nonces seen within the time window: a message seen again (a replay, or the broker's second
 * delivery) is refused. Older ones are forgotten; a message that old is refused by its time.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(readonly windowMs: number) {}

  /** True the first time a nonce is offered. */
  fresh(nonce: string, now: number): boolean {
    if (this.seen.size > 1000) for (const [n, at] of this.seen) if (now - at > 2 * this.windowMs) this.seen.delete(n);
    if (this.seen.has(nonce)) return false;
    this.seen.set(nonce, now);
    return true;
  }
}

/** The message's body and sender when it is signed with `key`, recent and not seen before; else why not. */
export function open(key: Buffer, payload: Buffer | string, guard: ReplayGuard, now = Date.now()): Opened {
  let data: unknown;
  try {
    data = JSON.parse(payload.toString());
  } catch {
    return { ok: false, reason: 'it is not JSON' };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, reason: 'it is not a signed message' };
  const { sig, ...unsigned } = data as Partial<Envelope<unknown>>;
  if (typeof sig !== 'string') return { ok: false, reason: 'it is not signed' };
  if (unsigned.proto !== PROTOCOL) return { ok: false, reason: `it is not a ${PROTOCOL} message` };
  if (typeof unsigned.from !== 'string' || typeof unsigned.nonce !== 'string' || typeof unsigned.at !== 'number')
    return { ok: false, reason: 'it lacks its sender, nonce or time' };
  const expected = Buffer.from(mac(key, unsigned as Omit<Envelope<unknown>, 'sig'>), 'hex');
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: `its signature does not match ${WORKER_KEY_ENV} (tampered, or signed with another key)` };
  if (!NONCE.test(unsigned.nonce)) return { ok: false, reason: 'its nonce is malformed' };
  if (Math.abs(now - unsigned.at) > guard.windowMs)
    return {
      ok: false,
      reason: `it was sent ${Math.round((now - unsigned.at) / 1000)} s from now, outside the ${guard.windowMs / 1000} s window (a replay, or clocks that differ)`,
    };
  if (!guard.fresh(unsigned.nonce, now)) return { ok: false, reason: 'its nonce was seen before (a replay)' };
  return { ok: true, from: unsigned.from, body: unsigned.body, nonce: unsigned.nonce };
}
