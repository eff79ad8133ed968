/**
 * Building blocks for answer schemas inside OpenAI's strict subset (src/backends/strict-schema.ts):
 * every object closed and fully required, optional values as a union with null, no open maps.
 */
export type Schema = Record<string, unknown>;

/** A JSON Schema for one call's answer, with the name OpenAI's `response_format` wants. */
export interface AnswerSchema {
  name: string;
  schema: Schema;
}

export const text: Schema = { type: 'string' };

export function texts(bounds: { min?: number; max?: number } = {}): Schema {
  return listOf(text, bounds);
}

export function choice(values: readonly string[]): Schema {
  return { type: 'string', enum: [...values] };
}

export function score(): Schema {
  return { type: 'integer', minimum: 1, maximum: 10 };
}

export function nullable(schema: Schema): Schema {
  return { anyOf: [schema, { type: 'null' }] };
}

/** A closed object: every property listed is required, no other is allowed. */
export function closed(properties: Record<string, Schema>): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** An object with exactly one property per id (criterion ids), each of the given shape. */
export function keyed(ids: readonly string[], value: Schema): Schema {
  return closed(Object.fromEntries(ids.map((id) => [id, value])));
}

export function listOf(item: Schema, bounds: { min?: number; max?: number } = {}): Schema {
  return {
    type: 'array',
    items: item,
    ...(bounds.min !== undefined ? { minItems: bounds.min } : {}),
    ...(bounds.max !== undefined ? { maxItems: bounds.max } : {}),
  };
}
