import { readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { lookUpProgram } from './find-program.ts';

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** `<prefix>/lib/python*\/{site,dist}-packages/massgen-*.dist-info/METADATA`: the installed MassGen's name and version. */
function distInfo(prefix: string): string[] {
  const out: string[] = [];
  const lib = path.join(prefix, 'lib');
  for (const python of list(lib).filter((n) => n.startsWith('python')))
    for (const packages of ['site-packages', 'dist-packages']) {
      const dir = path.join(lib, python, packages);
      for (const name of list(dir).filter((n) => /^massgen-.*\.dist-info$/i.test(n))) out.push(path.join(dir, name, 'METADATA'));
    }
  return out;
}

/**
 * The files that say which MassGen a command starts, found without starting it: where the
 * program's name was looked for on PATH (those before it, missing), the program itself and the
 * file it links to, any word of the command that is a file (`node fake.mjs`, `python cli.py`),
 * the `massgen-*.dist-info` of the installs it can come from (the prefix above the program's bin
 * folder: a venv, ~/.local, a pipx venv; and the project's .venv, which `uv run` uses), and the
 * project's uv.lock (what `uv run` syncs to). A new MassGen changes one of them: pip or uv
 * replaces the dist-info, a new binary replaces the program, `uv lock --upgrade` the lock.
 */
export function massgenIdentity(argv: readonly string[], root: string, env: NodeJS.ProcessEnv): string[] {
  const [program, ...args] = argv;
  if (!program) return [];
  const { looked, found } = lookUpProgram(program, env, root);
  const reads: string[] = [...looked];
  const prefixes = new Set<string>([path.join(root, '.venv')]);
  if (found) {
    prefixes.add(path.dirname(path.dirname(found)));
    try {
      const real = realpathSync(found);
      reads.push(real);
      prefixes.add(path.dirname(path.dirname(real)));
    } catch {
      /* gone meanwhile: the files above say so */
    }
  }
  for (const word of args) if (!word.startsWith('-') && isFile(path.resolve(root, word))) reads.push(path.resolve(root, word));
  for (const prefix of prefixes) reads.push(...distInfo(prefix));
  reads.push(path.join(root, 'uv.lock'));
  return [...new Set(reads)];
}
