// The build's standalone validators (scripts/compile-schemas.ts, dist/schemas/) load instead of an
// ajv compile only when made from the same schema text, and judge documents as ajv's compile does.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_SCHEMA_DIR, compileStandalone, loadPrecompiled, precompiledHeader } from '../../../src/artifacts/schema-registry.ts';
import { analyzeTurnUnit } from '../../../src/massgen/analyze.ts';
import { resolveTurnUnit } from '../../../src/massgen/discover.ts';
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
