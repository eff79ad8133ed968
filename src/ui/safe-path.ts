// Paths that come from a URL: each segment decoded once and checked (no `..`, no `.`, no encoded
// slash or NUL), then the real path (every symlink followed) must be inside the project's real
// root. Anything else is "not found": the dashboard never says what exists outside.
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/** Folders of a project the dashboard never serves: secrets (job tokens, its own URL file), tooling. */
const HIDDEN_FIRST = new Set(['.git', '.mam', 'node_modules']);
/** Dot-folders that hold what the dashboard shows. */
const SHOWN_DOT_FIRST = new Set(['.refinery', '.massgen']);

export interface Resolved {
  abs: string;
  /** Root-relative, '/' separators. */
  rel: string;
  kind: 'file' | 'dir';
  size: number;
  mtimeMs: number;
}

/** Splits and checks a '/'-separated relative path; undefined when any segment is unsafe. */
export function safeSegments(rel: string, decode: boolean): string[] | undefined {
  if (rel.length === 0 || rel.length > 4096) return undefined;
  const out: string[] = [];
  for (const raw of rel.split('/')) {
    let seg = raw;
    if (decode) {
      try {
        seg = decodeURIComponent(raw);
      } catch {
        return undefined;
      }
    }
    if (seg === '' || seg === '.' || seg === '..' || /[/\\\u0000]/.test(seg)) return undefined;
    out.push(seg);
  }
  const first = out[0] as string;
  if (HIDDEN_FIRST.has(first)) return undefined;
  if (first.startsWith('.') && !SHOWN_DOT_FIRST.has(first)) return undefined;
  if (first === '.refinery' && out[1] === 'ui') return undefined;
  return out;
}

function isInside(real: string, rootReal: string): boolean {
  return real === rootReal || real.startsWith(rootReal.endsWith(path.sep) ? rootReal : `${rootReal}${path.sep}`);
}

const realRoots = new Map<string, string>();

export function realRoot(root: string): string {
  let real = realRoots.get(root);
  if (real === undefined) {
    real = realpathSync.native(root);
    realRoots.set(root, real);
  }
  return real;
}

/**
 * A project file or folder named by a relative path (from a URL path when `decode`, from a query
 * value otherwise); undefined for anything unsafe, missing, or leading outside the project.
 */
export function resolveInProject(
  root: string,
  rel: string,
  options: { decode?: boolean; kind?: 'file' | 'dir' } = {},
): Resolved | undefined {
  const segments = safeSegments(rel, options.decode ?? false);
  if (!segments) return undefined;
  const abs = path.join(root, ...segments);
  let real: string;
  try {
    real = realpathSync.native(abs);
  } catch {
    return undefined;
  }
  if (!isInside(real, realRoot(root))) return undefined;
  let info;
  try {
    info = statSync(real);
  } catch {
    return undefined;
  }
  const kind = info.isFile() ? 'file' : info.isDirectory() ? 'dir' : undefined;
  if (!kind || (options.kind && options.kind !== kind)) return undefined;
  return { abs: real, rel: segments.join('/'), kind, size: info.size, mtimeMs: info.mtimeMs };
}

/** An absolute path as the root-relative form the API hands out, or undefined when it is outside. */
export function relativeInProject(root: string, abs: string): string | undefined {
  const rel = path.relative(root, abs);
  if (rel === '') return '.';
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}
