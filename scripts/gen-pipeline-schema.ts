// Writes schemas/pipeline.schema.json (what editors check pipeline files with) from the zod
// schemas the loader checks them with, src/pipeline/pipeline-schema.ts. Run after changing the
// grammar: `just gen-pipeline-schema`; test/unit/pipeline/pipeline-json-schema.test.ts fails
// while the committed file is not current.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';
import { pipelineJsonSchemaText } from '../src/engine/pipeline/pipeline-schema.ts';

const file = path.join(PACKAGE_ROOT, 'schemas', 'pipeline.schema.json');
writeFileSync(file, pipelineJsonSchemaText());
console.log(`wrote ${path.relative(process.cwd(), file)}`);
