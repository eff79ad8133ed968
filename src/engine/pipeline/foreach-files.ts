import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ExprEvalError } from '../expr/evaluate.ts';
import { isGlob } from '../paths/glob.ts';
import { existsInProject, paramFolders } from '../paths/inside-project.ts';
import { expandGlob } from '../paths/walk.ts';
import { type Observations, statStamp } from '../state/observations.ts';

/** Most bytes `lines(path)` reads: a list of questions or names, not a data set. */
const MAX_LINES_BYTES = 1 << 20;

/**
 * The file-reading functions of a foreach's list, `lines(path)` and `glob(patterns)`: what a
 * stage's instances are made from (one per config × question, say). Both record what they read in
 * the run's observations, so a later run sees an edited list as a change.
 */
export function foreachEffects(
  root: string,
  params: Readonly<Record<string, unknown>>,
  observations?: Observations,
): { lines: (p: string) => string[]; glob: (patterns: string[]) => string[] } {
  const folders = paramFolders(params);
  return {
    lines(rel) {
      if (rel === '') throw new ExprEvalError("lines(''): no file named; give a file of one item per line");
      // Inside the project or a folder a param names, as exists() looks (it throws otherwise).
      if (!existsInProject(root, rel, folders)) throw new ExprEvalError(`lines('${rel}'): no such file (${path.resolve(root, rel)})`);
      const abs = path.resolve(root, rel);
      const stamp = statStamp(abs);
      observations?.file(rel, stamp);
      if (stamp && stamp[0] > MAX_LINES_BYTES)
        throw new ExprEvalError(`lines('${rel}'): the file has ${stamp[0]} bytes; the limit is ${MAX_LINES_BYTES}`);
      return readFileSync(abs, 'utf8')
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l !== '');
    },
    glob(patterns) {
      const found = new Set<string>();
      for (const raw of patterns) {
        const pattern = raw.trim();
        if (pattern === '') continue;
        if (!isGlob(pattern)) {
          const abs = path.resolve(root, pattern);
          observations?.file(pattern, statStamp(abs));
          let isFile = false;
          try {
            isFile = statSync(abs).isFile();
          } catch {
            isFile = false;
          }
          if (!isFile) throw new ExprEvalError(`glob(): '${pattern}' is not a file (${abs})`);
          found.add(pattern);
          continue;
        }
        const matches = expandGlob(root, pattern, 'file', (dir, mtime) => observations?.dir(dir, mtime));
        if (matches.length === 0) throw new ExprEvalError(`glob(): '${pattern}' matches no file`);
        for (const m of matches) found.add(m);
      }
      return [...found].sort();
    },
  };
}
