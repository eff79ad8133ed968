/// <reference lib="dom" />
// The JSON API, with the ETag of each answer kept: refreshing an unchanged view costs a 304.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const etags = new Map<string, { etag: string; data: unknown }>();

export async function getJson<T>(path: string): Promise<T> {
  const cached = etags.get(path);
  const response = await fetch(path, { headers: cached ? { 'If-None-Match': cached.etag } : {}, credentials: 'same-origin' });
  if (response.status === 304 && cached) {
    // Read the (empty) body: a response left unread is reported as an aborted request.
    await response.text();
    return cached.data as T;
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = (await response.json()) as { error?: string };
      if (body.error) message = body.error;
    } catch {
      /* not JSON */
    }
    throw new ApiError(response.status, message);
  }
  const data = (await response.json()) as T;
  const etag = response.headers.get('ETag');
  if (etag) {
    etags.set(path, { etag, data });
    // A long session visits many pages: keep the newest few hundred.
    if (etags.size > 300) etags.delete(etags.keys().next().value as string);
  }
  return data;
}

export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  const data = (await response.json().catch(() => ({}))) as T & { error?: string };
  if (!response.ok) throw new ApiError(response.status, data.error ?? `${response.status} ${response.statusText}`);
  return data;
}

export function qs(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.set(k, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
}
