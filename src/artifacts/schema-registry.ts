// ajv enters the project here and nowhere else.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

/** refinery's own schemas/ folder, the fallback after a project's own. */
export const BUILTIN_SCHEMA_DIR = path.join(PACKAGE_ROOT, 'schemas');

export interface SchemaIssue {
  /** JSON pointer into the document, '' for the root. */
  pointer: string;
  message: string;
}

export type ValidationResult = { ok: true } | { ok: false; issues: SchemaIssue[] };

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function describe(error: ErrorObject): SchemaIssue {
  const params = error.params as Record<string, unknown>;
  let message = error.message ?? 'is invalid';
  if (error.keyword === 'additionalProperties') message = `has unknown property '${String(params.additionalProperty)}'`;
  if (error.keyword === 'required') message = `is missing required property '${String(params.missingProperty)}'`;
  if (error.keyword === 'enum') message = `${message}: ${JSON.stringify(params.allowedValues)}`;
  return { pointer: error.instancePath, message };
}

/** Finds schemas by name in the project's schemas/ first, then refinery's; compiles each once. */
export class SchemaRegistry {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly searchDirs: string[];

  constructor(projectRoot?: string) {
    this.ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(this.ajv);
    this.searchDirs = [projectRoot ? path.join(projectRoot, 'schemas') : undefined, BUILTIN_SCHEMA_DIR].filter(
      (dir): dir is string => dir !== undefined,
    );
  }

  /** The file a schema name (or path) resolves to, or undefined when there is none. */
  locate(name: string): string | undefined {
    if (name.endsWith('.json')) return existsSync(name) ? path.resolve(name) : undefined;
    for (const dir of this.searchDirs) {
      const file = path.join(dir, `${name}.schema.json`);
      if (existsSync(file)) return file;
    }
    return undefined;
  }

  /** Names resolvable from every search dir, for did-you-mean hints. */
  hasSchema(name: string): boolean {
    return this.locate(name) !== undefined;
  }

  validator(name: string): ValidateFunction {
    const file = this.locate(name);
    if (!file) throw new Error(`unknown schema '${name}'`);
    let validate = this.compiled.get(file);
    if (!validate) {
      const schema = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      const id = typeof schema.$id === 'string' ? schema.$id : undefined;
      const existing = id ? this.ajv.getSchema(id) : undefined;
      validate = existing ?? this.ajv.compile(schema);
      this.compiled.set(file, validate);
    }
    return validate;
  }

  validate(name: string, data: unknown): ValidationResult {
    const validate = this.validator(name);
    if (validate(data)) return { ok: true };
    return { ok: false, issues: (validate.errors ?? []).map(describe) };
  }
}

/**
 * Schemas built at run time (a model call's answer schema): compiled once per distinct schema text in
 * a small cache, since a session asks with the same few schemas over and over.
 */
const inlineAjv = new Ajv2020({ allErrors: true, strict: false });
addFormats(inlineAjv);
const inlineCompiled = new Map<string, ValidateFunction>();
const INLINE_CACHE_LIMIT = 64;

export function validateAgainst(schema: Record<string, unknown>, data: unknown): ValidationResult {
  const key = JSON.stringify(schema);
  let validate = inlineCompiled.get(key);
  if (!validate) {
    validate = inlineAjv.compile(schema);
    if (inlineCompiled.size >= INLINE_CACHE_LIMIT) inlineCompiled.delete(inlineCompiled.keys().next().value as string);
    inlineCompiled.set(key, validate);
  }
  if (validate(data)) return { ok: true };
  return { ok: false, issues: (validate.errors ?? []).map(describe) };
}
