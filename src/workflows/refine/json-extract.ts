/** Result of pulling one JSON value out of model text. */
export type Extracted = { ok: true; value: unknown; via: 'direct' | 'fence' | 'scan' } | { ok: false; reason: string };

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    // A common model slip: trailing commas before } or ].
    try {
      return { ok: true, value: JSON.parse(text.replace(/,\s*([}\]])/g, '$1')) };
    } catch {
      return { ok: false };
    }
  }
}

/** Bodies of ``` fences, ```json ones first. */
function fenceBodies(text: string): string[] {
  const fences = [...text.matchAll(/(?:```|~~~)([^\n]*)\n([\s\S]*?)\n?(?:```|~~~)/g)];
  const json = fences.filter((m) => /^\s*json\b/i.test(m[1] ?? '')).map((m) => m[2] ?? '');
  const other = fences.filter((m) => !/^\s*json\b/i.test(m[1] ?? '')).map((m) => m[2] ?? '');
  return [...json, ...other];
}

/** The balanced `{...}` starting at `start`, respecting strings; undefined when unbalanced. */
export function balancedObjectAt(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}') {
      depth--;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return undefined;
}

/**
 * MassGen's three parse attempts, in order: the whole text as JSON, the first ```json fence
 * (or any fence), then a brace-balanced scan from `marker` (a regex for the opening, e.g. `{"criteria"`)
 * or, without a marker, from each `{`.
 */
export function extractJson(text: string, marker?: RegExp): Extracted {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, reason: 'the answer is empty' };
  const direct = tryParse(trimmed);
  if (direct.ok) return { ok: true, value: direct.value, via: 'direct' };
  for (const body of fenceBodies(text)) {
    const parsed = tryParse(body.trim());
    if (parsed.ok) return { ok: true, value: parsed.value, via: 'fence' };
  }
  const starts: number[] = [];
  if (marker) {
    const flags = marker.flags.includes('g') ? marker.flags : `${marker.flags}g`;
    for (const m of text.matchAll(new RegExp(marker.source, flags))) starts.push(m.index);
  } else {
    for (let i = text.indexOf('{'); i >= 0 && starts.length < 50; i = text.indexOf('{', i + 1)) starts.push(i);
  }
  for (const start of starts) {
    const candidate = balancedObjectAt(text, start);
    if (!candidate) continue;
    const parsed = tryParse(candidate);
    if (parsed.ok) return { ok: true, value: parsed.value, via: 'scan' };
  }
  return { ok: false, reason: 'no JSON object found (tried the whole answer, code fences and a brace scan)' };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
