/**
 * OpenAI's strict Structured Outputs subset of JSON Schema, as its documentation states it: the root is
 * an object (not anyOf); every object lists all its properties in `required` and sets
 * `additionalProperties: false`; optional values are unions with null; only these keywords are
 * understood; at most 10 levels of nested objects, 5,000 properties and 1,000 enum values in all.
 * A schema outside the subset is refused by the server when sent with `strict: true`.
 */

const COMMON = new Set(['type', 'description', 'enum', 'const', 'anyOf', '$ref', '$defs']);
const BY_TYPE: Record<string, ReadonlySet<string>> = {
  object: new Set(['properties', 'required', 'additionalProperties']),
  array: new Set(['items', 'minItems', 'maxItems']),
  string: new Set(['pattern', 'format']),
  number: new Set(['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum']),
  integer: new Set(['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum']),
  boolean: new Set(),
  null: new Set(),
};
const TYPES = new Set(Object.keys(BY_TYPE));
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
export const STRICT_LIMITS = { nesting: 10, properties: 5000, enumValues: 1000 } as const;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

class Checker {
  readonly problems: string[] = [];
  properties = 0;
  enumValues = 0;

  constructor(private readonly root: Json) {}

  private problem(at: string, message: string): void {
    this.problems.push(`${at || '/'}: ${message}`);
  }

  private types(node: Json, at: string): string[] {
    const raw = node.type;
    const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    for (const t of list) if (typeof t !== 'string' || !TYPES.has(t)) this.problem(at, `type ${JSON.stringify(t)} is not supported`);
    return list.filter((t): t is string => typeof t === 'string');
  }

  node(node: unknown, at: string, depth: number): void {
    if (!isObject(node)) return this.problem(at, 'a schema must be an object');
    if (node.$ref !== undefined) {
      if (typeof node.$ref !== 'string' || !(node.$ref === '#' || node.$ref.startsWith('#/$defs/')))
        this.problem(at, '$ref must point into #/$defs');
      return;
    }
    const types = this.types(node, at);
    const allowed = new Set([...COMMON, ...types.flatMap((t) => [...(BY_TYPE[t] ?? [])])]);
    for (const key of Object.keys(node))
      if (!allowed.has(key)) this.problem(at, `keyword '${key}' is not supported${types.length ? ` for type ${types.join('|')}` : ''}`);
    if (types.length === 0 && node.anyOf === undefined && node.enum === undefined && node.const === undefined)
      this.problem(at, 'needs a type, an enum, a const or anyOf');
    if (Array.isArray(node.enum)) this.enumValues += node.enum.length;
    if (typeof node.format === 'string' && !FORMATS.has(node.format)) this.problem(at, `format '${node.format}' is not supported`);
    if (Array.isArray(node.anyOf)) node.anyOf.forEach((branch, i) => this.node(branch, `${at}/anyOf/${i}`, depth));
    if (isObject(node.$defs)) for (const [name, def] of Object.entries(node.$defs)) this.node(def, `${at}/$defs/${name}`, depth);
    if (types.includes('object')) this.object(node, at, depth + 1);
    if (types.includes('array')) {
      if (node.items === undefined) this.problem(at, 'an array needs items');
      else this.node(node.items, `${at}/items`, depth);
    }
  }

  private object(node: Json, at: string, depth: number): void {
    if (depth > STRICT_LIMITS.nesting) this.problem(at, `objects nest deeper than ${STRICT_LIMITS.nesting} levels`);
    if (node.additionalProperties !== false) this.problem(at, 'additionalProperties must be false');
    const properties = isObject(node.properties) ? node.properties : undefined;
    if (!properties) return this.problem(at, 'an object needs properties');
    const keys = Object.keys(properties);
    this.properties += keys.length;
    const required = Array.isArray(node.required) ? node.required : [];
    const missing = keys.filter((k) => !required.includes(k));
    if (missing.length > 0) this.problem(at, `every property must be required; not required: ${missing.join(', ')}`);
    const unknown = required.filter((k) => typeof k !== 'string' || !keys.includes(k));
    if (unknown.length > 0) this.problem(at, `required names properties that do not exist: ${unknown.join(', ')}`);
    for (const key of keys) this.node(properties[key], `${at}/properties/${key}`, depth);
  }

  check(): string[] {
    const types = this.types(this.root, '');
    if (this.root.anyOf !== undefined) this.problem('', 'the root must not be anyOf');
    if (!types.includes('object') || types.length !== 1) this.problem('', 'the root must be of type object');
    this.node(this.root, '', 0);
    if (this.properties > STRICT_LIMITS.properties)
      this.problem('', `${this.properties} properties in all; at most ${STRICT_LIMITS.properties}`);
    if (this.enumValues > STRICT_LIMITS.enumValues)
      this.problem('', `${this.enumValues} enum values in all; at most ${STRICT_LIMITS.enumValues}`);
    return this.problems;
  }
}

/** Why a schema falls outside OpenAI's strict subset (JSON pointer: problem); empty when it fits. */
export function strictSchemaProblems(schema: unknown): string[] {
  if (!isObject(schema)) return ['/: the schema must be a JSON object'];
  return new Checker(schema).check();
}
