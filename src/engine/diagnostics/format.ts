import type { Diagnostic } from '../types/source.ts';
import { styled } from './terminal-style.ts';

export interface FormatOptions {
  /** File contents by path, for showing the source line. */
  sources: ReadonlyMap<string, string>;
  color: boolean;
  /** Paths are shown relative to this directory. */
  cwd?: string;
}

function relative(file: string, cwd: string | undefined): string {
  if (cwd && file.startsWith(`${cwd}/`)) return file.slice(cwd.length + 1);
  return file;
}

/** `file:line:col message`, the source line, an underline, then the notes. */
export function formatDiagnostic(d: Diagnostic, options: FormatOptions): string {
  const red = (s: string): string => (options.color ? styled(31, 39, s) : s);
  const bold = (s: string): string => (options.color ? styled(1, 22, s) : s);
  const label = d.severity === 'error' ? red('error') : 'warning';
  if (!d.span) return [`${label}: ${d.message}`, ...(d.notes ?? []).map((n) => `  ${n}`)].join('\n');
  const { file, line, column, length } = d.span;
  const head = `${bold(`${relative(file, options.cwd)}:${line}:${column}`)} ${label}: ${d.message}`;
  const sourceLine = options.sources.get(file)?.split('\n')[line - 1];
  const out = [head];
  if (sourceLine !== undefined) {
    const gutter = String(line);
    out.push(`  ${gutter} | ${sourceLine}`);
    out.push(`  ${' '.repeat(gutter.length)} | ${' '.repeat(Math.max(0, column - 1))}${red('^'.repeat(Math.max(1, length)))}`);
  }
  for (const note of d.notes ?? []) out.push(`  = ${note}`);
  return out.join('\n');
}

/** Sorted by file, line, column, so the report does not depend on discovery order. */
export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => {
    const fa = a.span?.file ?? '';
    const fb = b.span?.file ?? '';
    if (fa !== fb) return fa < fb ? -1 : 1;
    return (a.span?.line ?? 0) - (b.span?.line ?? 0) || (a.span?.column ?? 0) - (b.span?.column ?? 0) || (a.message < b.message ? -1 : 1);
  });
}

export function formatDiagnostics(list: readonly Diagnostic[], options: FormatOptions): string {
  const sorted = sortDiagnostics(list);
  const errors = sorted.filter((d) => d.severity === 'error').length;
  const body = sorted.map((d) => formatDiagnostic(d, options)).join('\n\n');
  return `${body}\n\n${errors} error${errors === 1 ? '' : 's'} found; nothing was run.\n`;
}

/** Levenshtein distance, for did-you-mean hints. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const tmp = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] as number;
}

export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of [...candidates].sort()) {
    const d = editDistance(word, c);
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance < word.length && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}
