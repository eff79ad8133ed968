import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { pipelineJsonSchemaText } from '../../../src/engine/pipeline/pipeline-schema.ts';
import { REPO_ROOT } from '../../helpers/project.ts';

const registry = new SchemaRegistry(REPO_ROOT);

function pipelineFiles(): string[] {
  const dirs = ['pipelines', 'templates/init/pipelines'];
  return dirs.flatMap((dir) =>
    readdirSync(path.join(REPO_ROOT, dir))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => path.join(REPO_ROOT, dir, f)),
  );
}

describe('schemas/pipeline.schema.json', () => {
  it('pipeline JSON Schema - the committed file is the one generated from the zod schema (run `just gen-pipeline-schema`)', () => {
    expect(readFileSync(path.join(REPO_ROOT, 'schemas', 'pipeline.schema.json'), 'utf8')).toBe(pipelineJsonSchemaText());
  });

  it('pipeline JSON Schema - accepts every pipeline file of the repository', () => {
    const files = pipelineFiles();
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const file of files) expect(registry.validate('pipeline', parse(readFileSync(file, 'utf8'))), file).toEqual({ ok: true });
  });

  it('pipeline JSON Schema - rejects what the loader rejects: an unknown key, two kinds in one stage, a bad duration, a loop without stages', () => {
    const ok = { pipeline: 'p', stages: { a: { run: 'true', timeout: '30s', stale_if: 'self.o.done == false' } } };
    expect(registry.validate('pipeline', ok)).toEqual({ ok: true });
    for (const stage of [
      { run: 'true', ouputs: {} },
      { run: 'true', task: 'copy-json' },
      { run: 'true', timeout: 'soon' },
      { loop: { max: 2 } },
      {},
    ]) {
      expect(registry.validate('pipeline', { pipeline: 'p', stages: { a: stage } }).ok, JSON.stringify(stage)).toBe(false);
    }
    expect(registry.validate('pipeline', { pipeline: 'p', stages: { 'no spaces': { run: 'true' } } }).ok).toBe(false);
  });
});
