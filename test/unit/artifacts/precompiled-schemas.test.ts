// The build's standalone validators (scripts/compile-schemas.ts, dist/schemas/) load instead of an
// ajv compile only when made from the same schema text, and judge documents as ajv's compile does.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUILTIN_SCHEMA_DIR,
  compileStandalone,
  loadPrecompiled,
  precompiledHeader,
  SchemaRegistry,
} from '../../../src/engine/artifacts/schema-registry.ts';
import { analyzeTurnUnit } from '../../../src/workflows/massgen/analyze.ts';
import { resolveTurnUnit } from '../../../src/workflows/massgen/discover.ts';
import { REPO_ROOT } from '../../helpers/project.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const dir = mkdtempSync(path.join(os.tmpdir(), 'precompiled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('precompiled schema validators', () => {
  it('loadPrecompiled - a module made from the schema text judges valid and broken documents as an ajv compile does', async () => {
    const text = readFileSync(path.join(BUILTIN_SCHEMA_DIR, 'turn-analysis.schema.json'), 'utf8');
    const file = path.join(dir, 'turn-analysis.validate.cjs');
    writeFileSync(file, `${precompiledHeader(text)}${compileStandalone(JSON.parse(text) as Record<string, unknown>)}\n`);
    const loaded = loadPrecompiled(file, text);
    expect(loaded).toBeTypeOf('function');
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    const compiled = ajv.compile(JSON.parse(text) as Record<string, unknown>);
    const resolved = await resolveTurnUnit(path.join(REPO_ROOT, 'examples/massgen_logs/log_20251201_091040_312100/turn_1'));
    if (!resolved.ok) throw new Error(resolved.reason);
    const { analysis } = await analyzeTurnUnit(resolved.unit);
    const broken = JSON.parse(JSON.stringify(analysis)) as Record<string, any>;
    delete broken.question;
    broken.overview.answers = 'three';
    broken.source.massgenSession = { id: 'x', role: 'owner' };
    broken.analyzedAt = 'yesterday';
    for (const doc of [analysis, broken]) {
      const a = loaded?.(doc);
      const b = compiled(doc);
      expect(a).toBe(b);
      expect(loaded?.errors ?? null).toEqual(compiled.errors ?? null);
    }
    expect(compiled(broken)).toBe(false);
    expect((compiled.errors ?? []).length).toBeGreaterThanOrEqual(4);
  }, 60_000);

  it('loadPrecompiled - a module made from other schema text, broken code or no file is not used', () => {
    const text = '{"type":"object","required":["a"]}';
    const file = path.join(dir, 'tiny.validate.cjs');
    writeFileSync(file, `${precompiledHeader(text)}${compileStandalone(JSON.parse(text) as Record<string, unknown>)}\n`);
    expect(loadPrecompiled(file, text)?.({ a: 1 })).toBe(true);
    expect(loadPrecompiled(file, '{"type":"object"}')).toBeUndefined();
    writeFileSync(file, `${precompiledHeader(text)}module.exports = (;\n`);
    expect(loadPrecompiled(file, text)).toBeUndefined();
    expect(loadPrecompiled(path.join(dir, 'missing.validate.cjs'), text)).toBeUndefined();
  });
});

describe('SchemaRegistry with built-in validators', () => {
  it('SchemaRegistry - a project schema may $ref a built-in one that was loaded first, precompiled or not', () => {
    const project = mkdtempSync(path.join(os.tmpdir(), 'registry-'));
    try {
      const usage = JSON.parse(readFileSync(path.join(BUILTIN_SCHEMA_DIR, 'llm-usage.schema.json'), 'utf8')) as { $id: string };
      const registry = new SchemaRegistry(project);
      expect(registry.validate('llm-usage', {}).ok).toBe(false);
      const own = path.join(project, 'wrapped.schema.json');
      writeFileSync(
        own,
        JSON.stringify({
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          required: ['usage'],
          properties: { usage: { $ref: usage.$id } },
        }),
      );
      const nested = registry.validate(own, { usage: {} });
      expect(nested.ok).toBe(false);
      expect(!nested.ok && nested.issues.map((i) => i.pointer)).toContain('/usage');
      expect(!nested.ok && nested.issues.map((i) => i.message)).toContain("is missing required property 'schema_version'");
      expect(registry.validate(own, {})).toEqual({ ok: false, issues: [{ pointer: '', message: "is missing required property 'usage'" }] });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
