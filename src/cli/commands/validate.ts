import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { SchemaRegistry } from '../../engine/artifacts/schema-registry.ts';

const USAGE = `Usage: refinery validate FILE... --schema NAME [--json]

Validates JSON files against a JSON Schema (schemas/NAME.schema.json in the project, then
refinery's own; or a path to a .json schema). Exit 0 when every file is valid, 1 otherwise.`;

async function run(argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { schema: { type: 'string', short: 's' }, json: { type: 'boolean', default: false } },
    });
  } catch (error) {
    io.stderr.write(`refinery validate: ${(error as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (!values.schema || positionals.length === 0) {
    const missing = values.schema ? 'name the FILE to validate' : 'missing --schema NAME, the schema to validate against';
    io.stderr.write(`refinery validate: ${missing}\n${USAGE}\n`);
    return 2;
  }
  const registry = new SchemaRegistry(io.cwd);
  const schemaName = values.schema.endsWith('.json') ? path.resolve(io.cwd, values.schema) : values.schema;
  if (!registry.locate(schemaName)) {
    io.stderr.write(
      `refinery validate: unknown schema '${values.schema}' (looked for schemas/${values.schema}.schema.json in ${io.cwd} and in refinery)\n`,
    );
    return 2;
  }
  let failures = 0;
  const report: Array<{ file: string; valid: boolean; errors: Array<{ pointer: string; message: string }> }> = [];
  for (const file of positionals) {
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(path.resolve(io.cwd, file), 'utf8'));
    } catch (error) {
      failures += 1;
      report.push({
        file,
        valid: false,
        errors: [
          {
            pointer: '',
            message: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not valid JSON: ${(error as Error).message}`,
          },
        ],
      });
      continue;
    }
    const result = registry.validate(schemaName, data);
    if (!result.ok) failures += 1;
    report.push({ file, valid: result.ok, errors: result.ok ? [] : result.issues });
  }
  if (values.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    for (const r of report) {
      if (r.valid) io.stdout.write(`✓ ${r.file} is a valid ${values.schema}\n`);
      else for (const e of r.errors) io.stderr.write(`${r.file}:${e.pointer || '/'}: ${e.message}\n`);
    }
  }
  return failures === 0 ? 0 : 1;
}

export const validateCommand: Command = { name: 'validate', summary: 'Validate a file against a schema', usage: USAGE, run };
