import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { resolveInside } from './safe-path.ts';

export interface DeliverableFile {
  /** Path relative to the project root, with forward slashes. */
  path: string;
  bytes: number;
  binary: boolean;
  truncated: boolean;
  /** Included text (undefined for binary files or once the total limit is reached). */
  content?: string;
}

export interface DeliverableLimits {
  maxFileBytes: number;
  maxTotalBytes: number;
}

function listFiles(absolute: string): string[] {
  const stat = statSync(absolute);
  if (!stat.isDirectory()) return [absolute];
  return readdirSync(absolute, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => listFiles(path.join(absolute, entry.name)));
}

/** The deliverable's files, directories expanded and sorted, each once: absolute and project-relative paths. */
function deliverableFiles(root: string, paths: readonly string[]): Array<{ file: string; relative: string }> {
  const out: Array<{ file: string; relative: string }> = [];
  const seen = new Set<string>();
  for (const given of paths) {
    const absolute = resolveInside(root, given, 'deliverable path');
    let expanded: string[];
    try {
      expanded = listFiles(absolute);
    } catch {
      throw new Error(`deliverable path '${given}': not found under ${root}; check the 'deliverable' param`);
    }
    for (const file of expanded) {
      const relative = path.relative(root, file).split(path.sep).join('/');
      if (seen.has(relative)) continue;
      seen.add(relative);
      out.push({ file, relative });
    }
  }
  return out;
}

export interface DeliverableDigest {
  /** Path relative to the project root, with forward slashes. */
  path: string;
  bytes: number;
  sha256: string;
}

/** Which files, at which content, a round scored: a reader can tell whether a file changed since. */
export function deliverableDigests(root: string, paths: readonly string[]): DeliverableDigest[] {
  return deliverableFiles(root, paths).map(({ file, relative }) => {
    const buffer = readFileSync(file);
    return { path: relative, bytes: buffer.length, sha256: createHash('sha256').update(buffer).digest('hex') };
  });
}

/** Reads the deliverable's files (directories expanded, sorted), contents capped per file and in total. */
export function readDeliverable(root: string, paths: readonly string[], limits: DeliverableLimits): DeliverableFile[] {
  const files: DeliverableFile[] = [];
  let budget = limits.maxTotalBytes;
  for (const { file, relative } of deliverableFiles(root, paths)) {
    const buffer = readFileSync(file);
    const binary = buffer.subarray(0, 8192).includes(0);
    const entry: DeliverableFile = { path: relative, bytes: buffer.length, binary, truncated: false };
    if (!binary && budget > 0) {
      const take = Math.min(buffer.length, limits.maxFileBytes, budget);
      entry.content = buffer.subarray(0, take).toString('utf8');
      entry.truncated = take < buffer.length;
      budget -= take;
    } else if (!binary) entry.truncated = true;
    files.push(entry);
  }
  return files;
}

function fenceFor(content: string): string {
  const longest = Math.max(2, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

/** The files as prompt text; `label` replaces the path (blind comparisons show only base names). */
export function renderDeliverable(files: readonly DeliverableFile[], label: (file: DeliverableFile) => string = (f) => f.path): string {
  if (files.length === 0) return '_No files were given._';
  return files
    .map((file) => {
      const head = `### File: ${label(file)} (${file.bytes} bytes${file.truncated ? ', truncated' : ''})`;
      if (file.binary) return `${head}\n\n_Binary file; content not included._`;
      if (file.content === undefined) return `${head}\n\n_Not included: the total size limit was reached._`;
      const fence = fenceFor(file.content);
      return `${head}\n\n${fence}\n${file.content}\n${fence}`;
    })
    .join('\n\n');
}
