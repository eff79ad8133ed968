import { realpathSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { parseOrReport } from '../flags.ts';
import { PACKAGE_ROOT } from '../../engine/paths/package-root.ts';
import { ensureGitignore, writeScaffold, type FileResult, type GitignoreResult } from '../../init/scaffold.ts';
import { MASSGEN_LOGS_DIR, renderScaffold, unsafeRefineryDir } from '../../init/templates.ts';

const USAGE = `Usage: refinery init [--massgen] [--force]

Sets up the current folder (or -C DIR) as a refinery project: refinery.config.yaml (model
backends; only refinery's offline example is active), pipelines/starter.yaml with the task
tasks/count-lines.ts and the schema schemas/line-counts.schema.json, a Justfile with the
recipes analyze, refine, watch and ui (npx just --list), and .refinery/ in .gitignore.
Run it again at any time: it writes only what is missing and never changes an existing file.

Options:
  --massgen   just analyze reads MassGen's logs folder (${MASSGEN_LOGS_DIR}) when given no logs=PATH
  --force     overwrite the files init writes with its own versions (.gitignore is only appended to)`;

function realpathOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** refinery's folder as the project's files name it: node_modules/refinery when installed there. */
function refineryDirFrom(root: string): string {
  const installed = path.join(root, 'node_modules', 'refinery');
  if (realpathOrSelf(installed) === PACKAGE_ROOT) return 'node_modules/refinery';
  return path.relative(realpathOrSelf(root), PACKAGE_ROOT).split(path.sep).join('/') || '.';
}

const LABEL: Record<FileResult['outcome'], string> = {
  created: 'wrote',
  overwritten: 'overwrote',
  kept: 'left',
  unchanged: 'up to date',
  failed: 'FAILED',
};

function describeFile(r: FileResult): string {
  const why = r.outcome === 'kept' ? '  (it exists and differs; --force overwrites it)' : r.outcome === 'failed' ? `  (${r.error})` : '';
  return `  ${LABEL[r.outcome].padEnd(10)}  ${r.path}${why}`;
}

function describeGitignore(r: GitignoreResult): string {
  if (r.error) return `  ${LABEL.failed.padEnd(10)}  .gitignore  (${r.error})`;
  if (r.added.length === 0) return `  ${LABEL.unchanged.padEnd(10)}  .gitignore`;
  return `  ${(r.created ? 'wrote' : 'appended').padEnd(10)}  .gitignore  (${r.added.join(' ')})`;
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const parsed = parseOrReport(io, 'init', USAGE, () =>
    parseArgs({
      args: argv,
      allowPositionals: false,
      options: { massgen: { type: 'boolean', default: false }, force: { type: 'boolean', default: false } },
    }),
  );
  if (!parsed) return 2;
  const refineryDir = refineryDirFrom(io.cwd);
  const unsafe = unsafeRefineryDir(refineryDir);
  if (unsafe) {
    io.stderr.write(
      `refinery init: cannot refer to refinery's folder from ${io.cwd}: ${unsafe}; install refinery in the project (npm install --save-dev refinery)\n`,
    );
    return 1;
  }
  const scaffold = renderScaffold({ massgen: parsed.values.massgen, refineryDir });
  const files = writeScaffold(io.cwd, scaffold.files, { force: parsed.values.force });
  const gitignore = ensureGitignore(io.cwd, scaffold.gitignoreLines);
  const lines = [`refinery init in ${io.cwd}:`, ...files.map(describeFile), describeGitignore(gitignore)];
  if (!/(^|\/)node_modules\/refinery$/.test(refineryDir)) {
    lines.push(
      `note: refinery runs from ${PACKAGE_ROOT}, not from this project's node_modules; the Justfile's recipes need it installed here: npm install --save-dev refinery`,
    );
  }
  lines.push(
    'next:',
    '  npx refinery run starter     the starter pipeline: reports/line-counts.json',
    `  npx just --list              the recipes: analyze${parsed.values.massgen ? ` (${MASSGEN_LOGS_DIR})` : ' logs=PATH'}, refine, watch, ui`,
  );
  io.stdout.write(`${lines.join('\n')}\n`);
  return files.some((f) => f.outcome === 'failed') || gitignore.error ? 1 : 0;
}

export const initCommand: Command = {
  name: 'init',
  summary: 'Set up a project: config, a starter pipeline, task and schema, a Justfile',
  usage: USAGE,
  run,
};
