import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every depth, so equal values always hash the same. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Cache key over the backend's identity, model, prompt and the options that change the answer. */
export function cacheKey(parts: {
  backend: string;
  kind: string;
  model: string;
  identity: Readonly<Record<string, unknown>>;
  system?: string;
  prompt: string;
  jsonSchema?: unknown;
  temperature?: number;
  maxTokens?: number;
}): string {
  return sha256(canonicalJson({ v: 1, ...parts }));
}
