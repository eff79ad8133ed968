/** Glob patterns over '/'-separated relative paths: *, **, ?, [abc], {a,b}. Pure. */

export function isGlob(pattern: string): boolean {
  return /[*?[{]/.test(pattern);
}

function braceAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of body) {
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    if (c === '{') depth += 1;
    if (c === '}') depth -= 1;
    current += c;
  }
  parts.push(current);
  return parts;
}

function segmentToRegex(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const slashAfter = pattern[i + 2] === '/';
        out += slashAfter ? '(?:[^/]*(?:/|$))*' : '.*';
        i += slashAfter ? 2 : 1;
      } else out += '[^/]*';
    } else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close < 0) out += '\\[';
      else {
        const body = pattern.slice(i + 1, close).replace(/^!/, '^').replace(/\\/g, '\\\\');
        out += `[${body}]`;
        i = close;
      }
    } else if (c === '{') {
      let depth = 1;
      let j = i + 1;
      for (; j < pattern.length && depth > 0; j += 1) {
        if (pattern[j] === '{') depth += 1;
        if (pattern[j] === '}') depth -= 1;
      }
      const body = pattern.slice(i + 1, j - 1);
      out += `(?:${braceAlternatives(body).map(segmentToRegex).join('|')})`;
      i = j - 1;
    } else out += c.replace(/[.+^$()|\\]/g, '\\$&');
  }
  return out;
}

const cache = new Map<string, RegExp>();

export function globToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    re = new RegExp(`^${segmentToRegex(pattern)}$`);
    cache.set(pattern, re);
  }
  return re;
}

export function matchGlob(pattern: string, file: string): boolean {
  return globToRegExp(pattern).test(file);
}

/** The leading directories of a pattern that contain no glob characters ('' for none). */
export function staticPrefix(pattern: string): string {
  const segments = pattern.split('/');
  const fixed: string[] = [];
  for (const s of segments.slice(0, -1)) {
    if (isGlob(s)) break;
    fixed.push(s);
  }
  if (fixed.length === segments.length - 1 && !isGlob(segments[segments.length - 1] as string)) return pattern;
  return fixed.join('/');
}
