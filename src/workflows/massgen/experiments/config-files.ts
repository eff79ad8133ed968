import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseYamlText } from '../yaml-file.ts';

/** A named file larger than this is fingerprinted by size and mtime, not read. */
const MAX_HASHED_BYTES = 16 * 1024 * 1024;
const MAX_NAMED_FILES = 200;

export interface ConfigFingerprint {
  config: string;
  sha256: string;
  /** Files the config names that were found (relative to the config's folder or the project), each with its hash. */
  files: Record<string, string>;
  /** Text of the config's YAML error, if it is not YAML (MassGen will say so when it runs). */
  yaml_error: string | null;
}

function strings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
}

async function fileHash(abs: string): Promise<string | undefined> {
  try {
    const st = await stat(abs);
    if (!st.isFile()) return undefined;
    if (st.size > MAX_HASHED_BYTES) return `size:${st.size}:mtime:${st.mtimeMs}`;
    return createHash('sha256')
      .update(await readFile(abs))
      .digest('hex');
  } catch {
    return undefined;
  }
}

/**
 * What a MassGen config is made of: its own bytes and every file it names that can be found
 * (a string value that is the path of a regular file, relative to the config's folder or to the
 * project root: a system prompt file, a custom tool, a context file). Folders (an agent's cwd, a
 * workspace) are left out: the run itself writes there. `looked` is every path looked at for a
 * named file, found or not (relative to the project when inside it): what the stage read, so
 * that a named file that changes, appears or goes away redoes it.
 */
export async function configFingerprint(root: string, config: string): Promise<ConfigFingerprint & { looked: string[] }> {
  const abs = path.resolve(root, config);
  const bytes = await readFile(abs);
  const parsed = parseYamlText(bytes.toString('utf8'));
  const values: string[] = [];
  if (parsed.ok) strings(parsed.value, values);
  const files: Record<string, string> = {};
  const looked: string[] = [];
  const candidates = [...new Set(values.filter((v) => v.length < 4096 && !v.includes('\n') && !v.includes('\0') && v.trim() !== ''))];
  for (const value of candidates) {
    if (Object.keys(files).length >= MAX_NAMED_FILES) break;
    for (const base of [path.dirname(abs), root]) {
      const named = path.resolve(base, value);
      if (named === abs) continue;
      const rel = path.relative(root, named);
      const key = rel.startsWith('..') || path.isAbsolute(rel) ? named : rel.split(path.sep).join('/');
      looked.push(key);
      const hash = await fileHash(named);
      if (hash === undefined) continue;
      files[key] = hash;
      break;
    }
  }
  return {
    config,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    files: Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b))),
    looked: [...new Set(looked)].sort(),
    yaml_error: parsed.ok ? null : parsed.message,
  };
}
