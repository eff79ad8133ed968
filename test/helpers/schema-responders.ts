// Responders for the fake OpenAI-compatible server that behave like real model servers towards the
// answer schema a request carries: one that always answers WITHIN that schema (as OpenAI structured
// outputs, vLLM guided decoding, llama.cpp grammars and Ollama's `format` do), one that ignores it and
// answers prose, one that refuses it (400) and one that answers garbage on a seeded share of requests.
import { createHash } from 'node:crypto';
import type { FakeReply, RecordedRequest, Responder } from './fake-openai-server.ts';

type Schema = Record<string, unknown>;

export interface ExampleOptions {
  /** A number for an integer/number node (default: the middle of minimum..maximum, rounded). */
  number?: (path: string, min: number, max: number) => number;
}

interface Place {
  path: string;
  /** Index of the innermost array item this value sits in (0 outside arrays). */
  index: number;
}

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function firstType(schema: Schema): string | undefined {
  const type = schema.type;
  if (Array.isArray(type)) return type.find((t) => t !== 'null') ?? 'null';
  return typeof type === 'string' ? type : undefined;
}

function stringFor(schema: Schema, at: Place): string {
  if (typeof schema.pattern === 'string') {
    // The one pattern refine's schemas use: a positional criterion id.
    if (schema.pattern === '^E[1-9][0-9]*$') return `E${at.index + 1}`;
    throw new Error(`exampleFromSchema: cannot derive a string for pattern ${schema.pattern} at ${at.path}`);
  }
  return `${at.path.replace(/^\//, '').replaceAll('/', ' ') || 'answer'} (${at.index + 1})`;
}

function valueFor(schema: unknown, at: Place, options: ExampleOptions): unknown {
  if (!isObject(schema)) throw new Error(`exampleFromSchema: no schema at ${at.path}`);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((v) => v !== null);
    return values.length > 0 ? values[at.index % values.length] : null;
  }
  if (Array.isArray(schema.anyOf)) {
    const branch = schema.anyOf.find((b) => !(isObject(b) && b.type === 'null')) ?? schema.anyOf[0];
    return valueFor(branch, at, options);
  }
  const type = firstType(schema);
  switch (type) {
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties).map(([key, sub]) => [key, valueFor(sub, { path: `${at.path}/${key}`, index: at.index }, options)]),
      );
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
      const count = Math.min(Math.max(min, 1), typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY);
      return Array.from({ length: count }, (_, index) => valueFor(schema.items, { path: `${at.path}/${index}`, index }, options));
    }
    case 'string':
      return stringFor(schema, at);
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : 0;
      const max = typeof schema.maximum === 'number' ? schema.maximum : min + 10;
      return options.number ? options.number(at.path, min, max) : Math.round((min + max) / 2);
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      throw new Error(`exampleFromSchema: unsupported node at ${at.path}: ${JSON.stringify(schema).slice(0, 80)}`);
  }
}

/**
 * A value valid against `schema`, derived from it alone: every property present, the first non-null
 * branch of each union, enums cycling by array position (so a list of per-criterion items names each
 * criterion once), `minItems` items (at least one), numbers in the middle of their range.
 */
export function exampleFromSchema(schema: Schema, options: ExampleOptions = {}): unknown {
  return valueFor(schema, { path: '', index: 0 }, options);
}

const PROSE = 'Thanks for sharing this. Overall it reads well; I would tighten the introduction and add an example or two. Solid work.';

export interface SchemaModeOptions {
  delayMs?: number;
  /** How a request's example is derived (e.g. scores per model, to play a harsh or a lenient judge). */
  example?: (request: RecordedRequest) => ExampleOptions;
  /** Answer for a request that carried no schema. */
  withoutSchema?: (request: RecordedRequest) => FakeReply;
}

/** The schema a prompt carries under refinery's `## Answer schema` heading (its last line), if any. */
export function schemaInPrompt(prompt: string): Schema | undefined {
  const at = prompt.lastIndexOf('\n## Answer schema\n');
  if (at < 0) return undefined;
  try {
    const value = JSON.parse(prompt.slice(at).trim().split('\n').at(-1) ?? '') as unknown;
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Answers every request within the schema it was sent; a request without one follows the schema its
 * prompt carries (as a capable model would), else gets prose (or `withoutSchema`).
 */
export function schemaFollowingResponder(options: SchemaModeOptions = {}): Responder {
  return (request) => {
    const schema = request.schema ?? schemaInPrompt(request.prompt);
    if (!schema)
      return (
        options.withoutSchema?.(request) ?? { kind: 'content', content: PROSE, ...(options.delayMs ? { delayMs: options.delayMs } : {}) }
      );
    const content = JSON.stringify(exampleFromSchema(schema, options.example?.(request) ?? {}));
    return { kind: 'content', content, ...(options.delayMs ? { delayMs: options.delayMs } : {}) };
  };
}

/** Ignores any schema and answers prose, as a server without structured outputs (and a chatty model) would. */
export function proseResponder(): Responder {
  return () => ({ kind: 'content', content: PROSE });
}

/** Refuses a request that carries a schema (HTTP 400, as a server without structured outputs does); otherwise `inner`. */
export function schemaRefusingResponder(inner: Responder): Responder {
  return (request) =>
    request.schema
      ? {
          kind: 'status',
          status: 400,
          body: JSON.stringify({
            error: { message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model." },
          }),
        }
      : inner(request);
}

/** Rebuilds a JSON object answer with `edit` applied to its entries (the answer as it was when it is not one). */
function editObject(good: string, edit: (entries: Array<[string, unknown]>) => Array<[string, unknown]>): string {
  try {
    const value = JSON.parse(good) as unknown;
    return isObject(value) ? JSON.stringify(Object.fromEntries(edit(Object.entries(value)))) : good;
  } catch {
    return good;
  }
}

/** Kinds of garbage; each breaks the answer (none is valid against the schema it was asked for). */
const GARBAGE: Array<(good: string) => string> = [
  () => PROSE,
  (good) => good.slice(0, Math.max(10, Math.floor(good.length / 3))),
  (good) => editObject(good, (entries) => entries.slice(1)),
  () => '<html><body>502 Bad Gateway</body></html>',
  (good) =>
    `Here you go:\n\`\`\`json\n${editObject(good, (entries) => entries.map(([k, v], i) => [k, i === entries.length - 1 ? 'n/a' : v]))}\n\`\`\``,
];

/** A deterministic number in [0, 1) from a text. */
function unit(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * `inner`, except that `percent`% of requests (chosen by a seeded hash of the model and the prompt, so
 * a run is reproducible whatever order parallel judges ask in) get one of several kinds of garbage:
 * prose, a cut-off answer, a missing key, an HTML error page, a fenced answer with a broken value.
 * `garbled` lists the requests that got garbage.
 */
export function garbageResponder(percent: number, seed: string, inner: Responder): Responder & { garbled: RecordedRequest[] } {
  const garbled: RecordedRequest[] = [];
  const responder = (request: RecordedRequest): FakeReply => {
    const reply = inner(request);
    const key = `${seed}|${request.body.model}|${request.prompt}`;
    if (reply.kind !== 'content' || unit(key) >= percent / 100) return reply;
    garbled.push(request);
    const make = GARBAGE[Math.floor(unit(`${key}|kind`) * GARBAGE.length)] as (typeof GARBAGE)[number];
    return { ...reply, content: make(reply.content) };
  };
  return Object.assign(responder, { garbled });
}
