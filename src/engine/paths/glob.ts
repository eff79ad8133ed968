import { createRequire } from 'node:module';
import type picomatch from 'picomatch';

/**
 * Glob patterns over '/'-separated paths, matched by picomatch: `*` and `?` within one
 * segment, `**` across segments, `[abc]` and `[!abc]`, `{a,b}`. As in shells, a wildcard
 * does not match a name starting with `.` unless the pattern writes the dot (`.*`, `src/.env*`).
 * Parentheses and `|` are plain characters, as in file names, not regex groups or extglobs.
 * The one module that imports picomatch.
 */

const OPTIONS: picomatch.PicomatchOptions = { dot: false, posix: true, nonegate: true, noextglob: true };

let library: typeof picomatch | undefined;

/** Loaded with the first pattern: a run that matches none (checking one changed file) does without it. */
function loadPicomatch(): typeof picomatch {
  library ??= createRequire(import.meta.url)('picomatch') as typeof picomatch;
  return library;
}

export function isGlob(pattern: string): boolean {
  return /[*?[{]/.test(pattern);
}

const cache = new Map<string, RegExp>();

export function globToRegExp(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (!re) {
    // picomatch reads ( ) | as regex groups; in a path they are characters.
    re = loadPicomatch().makeRe(pattern.replace(/[()|]/g, '\\$&'), OPTIONS);
    cache.set(pattern, re);
  }
  return re;
}

export function matchGlob(pattern: string, file: string): boolean {
  return globToRegExp(pattern).test(file);
}

/** Where an input pattern reads from: a glob's fixed leading folders ('' for the root), else the path itself. */
export function patternRoot(pattern: string): string {
  return isGlob(pattern) ? staticPrefix(pattern) : pattern;
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
