// Test helper: list a generated tree (files and symlinks) with contents, without following links.
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

export type Entry = { kind: 'file'; data: Buffer } | { kind: 'link'; target: string };

export function readTree(root: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const rel = relative(root, path);
      if (st.isSymbolicLink()) out.set(rel, { kind: 'link', target: readlinkSync(path) });
      else if (st.isDirectory()) walk(path);
      else out.set(rel, { kind: 'file', data: readFileSync(path) });
    }
  };
  walk(root);
  return out;
}

/** Paths whose entries differ (or exist on one side only). */
export function diffTrees(a: Map<string, Entry>, b: Map<string, Entry>): string[] {
  const diffs: string[] = [];
  for (const path of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(path);
    const y = b.get(path);
    if (!x || !y) diffs.push(`${path}: only in ${x ? 'first' : 'second'}`);
    else if (x.kind !== y.kind) diffs.push(`${path}: ${x.kind} vs ${y.kind}`);
    else if (x.kind === 'file' && y.kind === 'file' && !x.data.equals(y.data)) diffs.push(`${path}: contents differ`);
    else if (x.kind === 'link' && y.kind === 'link' && x.target !== y.target) diffs.push(`${path}: link target differs`);
  }
  return diffs.sort();
}
