// `refinery refine export-criteria`: a session's criteria in the forms MassGen reads.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';
import type { CriteriaDocument } from '../../workflows/refine/criteria.ts';
import { EXPORT_FORMATS, exportCriteria, type ExportFormat } from '../../workflows/refine/criteria-export.ts';
import { DEFAULT_SESSIONS_DIR, SESSION_NAME, sessionDir, sessionFiles } from '../../workflows/refine/session-layout.ts';
import { writeFileAtomicSync } from '../../engine/state/atomic-file.ts';
import type { Command, CommandIo } from '../command.ts';

const USAGE = `Usage:
  refinery refine export-criteria SESSION [--format massgen-checklist|eval-criteria] [--out FILE] [--sessions-dir DIR]

export-criteria  Writes the criteria of .refinery/sessions/SESSION/criteria.json (stdout, or --out FILE):
                 massgen-checklist  the bare array MassGen's quality server keeps in
                                    .massgen-quality/sessions/<id>/criteria.json ([{id, text, category, rationale}])
                 eval-criteria      the wrapped {criteria: [...]} form massgen --eval-criteria reads (default)`;

function fail(io: CommandIo, message: string, code = 2): number {
  io.stderr.write(`refinery refine: ${message}\n`);
  return code;
}

function readCriteria(io: CommandIo, file: string, shown: string): CriteriaDocument | string {
  if (!existsSync(file))
    return `${shown} does not exist; run the refine pipeline for this session first (refinery run refine --param session=...)`;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    return `${shown} is not valid JSON (${(error as Error).message}); rerun the criteria stage (refinery run refine --force)`;
  }
  const check = new SchemaRegistry(io.cwd).validate('eval-criteria', data);
  if (!check.ok) {
    const where = check.issues
      .slice(0, 3)
      .map((i) => `${i.pointer || '/'} ${i.message}`)
      .join('; ');
    return `${shown} is not a criteria document (${where}); check it with: refinery validate ${shown} --schema eval-criteria`;
  }
  return data as CriteriaDocument;
}

async function exportCommand(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { format: { type: 'string' }, out: { type: 'string', short: 'o' }, 'sessions-dir': { type: 'string' } },
    });
  } catch (error) {
    return fail(io, `${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) return fail(io, `export-criteria takes one SESSION\n${USAGE}`);
  const session = SESSION_NAME.safeParse(positionals[0]);
  if (!session.success) return fail(io, `session '${positionals[0]}': ${session.error.issues[0]?.message ?? 'invalid'}`);
  const format = (values.format ?? 'eval-criteria') as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) return fail(io, `--format must be one of ${EXPORT_FORMATS.join(', ')}, got '${values.format}'`);
  const shown = path.posix.join(sessionDir(values['sessions-dir'] ?? DEFAULT_SESSIONS_DIR, session.data), sessionFiles.criteria);
  const doc = readCriteria(io, path.resolve(io.cwd, shown), shown);
  if (typeof doc === 'string') return fail(io, doc, 1);
  const text = `${JSON.stringify(exportCriteria(doc.criteria, format), null, 2)}\n`;
  if (!values.out) {
    io.stdout.write(text);
    return 0;
  }
  const out = path.resolve(io.cwd, values.out);
  try {
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileAtomicSync(out, text);
  } catch (error) {
    return fail(io, `cannot write ${values.out}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 1);
  }
  io.stderr.write(`wrote ${doc.criteria.length} criteria (${format}) to ${values.out}\n`);
  return 0;
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'export-criteria') return exportCommand(rest, io);
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    if (sub === undefined) return fail(io, `missing subcommand\n${USAGE}`);
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  return fail(io, `unknown subcommand '${sub}'\n${USAGE}`);
}

export const refineCommand: Command = {
  name: 'refine',
  summary: "Refine sessions: export a session's criteria for MassGen",
  usage: USAGE,
  run,
};
