// Compiles refinery's own JSON Schemas (schemas/*.schema.json) into standalone validator modules
// under dist/schemas/, so an installed refinery loads them instead of compiling them with ajv on
// every start (ajv's compile is 50-150 ms per schema; loading the generated code a few ms).
// Each module records the sha256 of the schema text it was made from: SchemaRegistry uses it only
// while the schema is unchanged. Run by `npm run build`.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';
import { compileStandalone, precompiledFileOf, precompiledHeader } from '../src/engine/artifacts/schema-registry.ts';

const schemas = path.join(PACKAGE_ROOT, 'schemas');
const out = path.dirname(precompiledFileOf('x'));
mkdirSync(out, { recursive: true });
let count = 0;
for (const file of readdirSync(schemas)
  .filter((f) => f.endsWith('.schema.json'))
  .sort()) {
  const text = readFileSync(path.join(schemas, file), 'utf8');
  const name = file.slice(0, -'.schema.json'.length);
  writeFileSync(precompiledFileOf(name), `${precompiledHeader(text)}${compileStandalone(JSON.parse(text) as Record<string, unknown>)}\n`);
  count += 1;
}
process.stdout.write(`compile-schemas: ${count} validators in ${path.relative(PACKAGE_ROOT, out)}\n`);
