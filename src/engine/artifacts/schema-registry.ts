// ajv enters the project here and nowhere else.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Ajv2020, ValidateFunction, ErrorObject, Options } from 'ajv/dist/2020.js';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

/** refinery's own schemas/ folder, the fallback after a project's own. */
export const BUILTIN_SCHEMA_DIR = path.join(PACKAGE_ROOT, 'schemas');

const AJV_OPTIONS: Options = { allErrors: true, strict: false };
/** refinery's own dependencies, resolved from its package (also for generated validator code). */
const requirePackage = createRequire(path.join(PACKAGE_ROOT, 'package.json'));

// Loading ajv costs 40-100 ms: only a schema that has to be compiled pays it.
function newAjv(options: Options): Ajv2020 {
  const { Ajv2020: Ajv } = requirePackage('ajv/dist/2020.js') as { Ajv2020: new (o: Options) => Ajv2020 };
  const formats = requirePackage('ajv-formats') as ((ajv: Ajv2020) => Ajv2020) & { default?: (ajv: Ajv2020) => Ajv2020 };
  const ajv = new Ajv(options);
  (formats.default ?? formats)(ajv);
  return ajv;
}

/** Where `npm run build` puts the standalone validator of one of refinery's own schemas. */
export function precompiledFileOf(name: string): string {
  return path.join(PACKAGE_ROOT, 'dist', 'schemas', `${name}.validate.cjs`);
}

export function schemaTextHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A schema as standalone validator code (CommonJS), with the registry's own options (scripts/compile-schemas.ts). */
export function compileStandalone(schema: Record<string, unknown>): string {
  const ajv = newAjv({ ...AJV_OPTIONS, code: { source: true } });
  const standalone = requirePackage('ajv/dist/standalone/index.js') as { default: (ajv: Ajv2020, validate: ValidateFunction) => string };
  return standalone.default(ajv, ajv.compile(schema));
}

/** The header `npm run build` writes first in a precompiled validator: which schema text it was made from. */
export function precompiledHeader(text: string): string {
  return `// sha256:${schemaTextHash(text)}\n`;
}

/**
 * A standalone validator module, when it was made from this very schema text; undefined when it
 * is missing, stale or broken (the caller compiles the schema instead).
 */
export function loadPrecompiled(moduleFile: string, text: string): ValidateFunction | undefined {
  let code: string;
  try {
    code = readFileSync(moduleFile, 'utf8');
  } catch {
    return undefined;
  }
  if (!code.startsWith(precompiledHeader(text))) return undefined;
  const module: { exports: unknown } = { exports: {} };
  try {
    // The generated module needs ajv's runtime helpers and ajv-formats: refinery's own dependencies.
    new Function('module', 'exports', 'require', code)(module, module.exports, requirePackage);
  } catch {
    return undefined;
  }
  const exported = module.exports as ValidateFunction | undefined;
  return typeof exported === 'function' ? exported : undefined;
}

/**
 * The build's validator of one of refinery's own schemas (ajv compiles a large schema in 50-150 ms;
 * this loads in a few). Only package files: a project's schemas are always compiled.
 */
function precompiled(file: string, text: string): ValidateFunction | undefined {
  if (path.dirname(file) !== BUILTIN_SCHEMA_DIR) return undefined;
  return loadPrecompiled(precompiledFileOf(path.basename(file, '.schema.json')), text);
}

export interface SchemaIssue {
  /** JSON pointer into the document, '' for the root. */
  pointer: string;
  message: string;
}

export type ValidationResult = { ok: true } | { ok: false; issues: SchemaIssue[] };

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
  private ajvInstance: Ajv2020 | undefined;
  private readonly compiled = new Map<string, ValidateFunction>();
  /** Built-in schemas loaded precompiled: added to ajv once it exists, for a project schema that $refs one. */
  private readonly loadedSchemas: Record<string, unknown>[] = [];
  private readonly searchDirs: string[];

  constructor(projectRoot?: string) {
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

  private get ajv(): Ajv2020 {
    if (!this.ajvInstance) {
      this.ajvInstance = newAjv(AJV_OPTIONS);
      for (const schema of this.loadedSchemas) this.ajvInstance.addSchema(schema);
    }
    return this.ajvInstance;
  }

  validator(name: string): ValidateFunction {
    const file = this.locate(name);
    if (!file) throw new Error(`unknown schema '${name}'`);
    let validate = this.compiled.get(file);
    if (!validate) {
      const text = readFileSync(file, 'utf8');
      const schema = JSON.parse(text) as Record<string, unknown>;
      const id = typeof schema.$id === 'string' ? schema.$id : undefined;
      const built = this.ajvInstance && id && this.ajvInstance.getSchema(id) ? undefined : precompiled(file, text);
      if (built) {
        // Known to ajv all the same (not compiled until used), for a project schema that $refs it.
        if (id && this.ajvInstance) this.ajvInstance.addSchema(schema);
        else if (id) this.loadedSchemas.push(schema);
        validate = built;
      } else {
        const existing = id ? this.ajv.getSchema(id) : undefined;
        validate = existing ?? this.ajv.compile(schema);
      }
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
let inlineAjv: Ajv2020 | undefined;
const inlineCompiled = new Map<string, ValidateFunction>();
const INLINE_CACHE_LIMIT = 64;

export function validateAgainst(schema: Record<string, unknown>, data: unknown): ValidationResult {
  const key = JSON.stringify(schema);
  let validate = inlineCompiled.get(key);
  if (!validate) {
    inlineAjv ??= newAjv(AJV_OPTIONS);
    validate = inlineAjv.compile(schema);
    if (inlineCompiled.size >= INLINE_CACHE_LIMIT) inlineCompiled.delete(inlineCompiled.keys().next().value as string);
    inlineCompiled.set(key, validate);
  }
  if (validate(data)) return { ok: true };
  return { ok: false, issues: (validate.errors ?? []).map(describe) };
}
