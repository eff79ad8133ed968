import { z } from 'zod';

/** Names of keys that must never hold a secret in the config file. */
export const SECRET_KEY_NAMES = ['api_key', 'apikey', 'token', 'secret', 'password', 'authorization'] as const;

const retrySchema = z
  .strictObject({
    max: z.int().min(0).max(10).default(3),
    base_ms: z.int().min(1).max(60_000).default(1000),
    max_ms: z.int().min(1).max(600_000).default(60_000),
    retry_429: z.boolean().default(true),
  })
  .prefault({});

const priceSchema = z.strictObject({
  input_per_mtok: z.number().min(0),
  output_per_mtok: z.number().min(0),
});

const common = {
  model: z.string().min(1).optional(),
  concurrency: z.int().min(1).max(64).optional(),
  timeout_s: z.number().positive().max(86_400).default(600),
  retry: retrySchema,
  price: priceSchema.optional(),
};

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

export const commandBackendSchema = z.strictObject({
  kind: z.literal('command'),
  ...common,
  preset: z.enum(['claude', 'codex', 'gemini']).optional(),
  /** Argument template: executable then args; `{model}` and `{prompt_file}` are substituted per argument. */
  command: z.array(z.string().min(1)).min(1).optional(),
  /** Override the executable of a preset (a path or a name on PATH). */
  executable: z.string().min(1).optional(),
  extra_args: z.array(z.string()).default([]),
  prompt_via: z.enum(['stdin', 'file']).optional(),
  output: z.enum(['text', 'claude-json', 'codex-jsonl', 'gemini-json']).optional(),
  /** Environment variables passed through to the child besides PATH, HOME and locale. */
  env: z.array(envName).default([]),
});

export const openaiBackendSchema = z.strictObject({
  kind: z.literal('openai'),
  ...common,
  model: z.string().min(1),
  base_url: z.url({ protocol: /^https?$/ }),
  api_key_env: envName.optional(),
  /** The server's own API for answers with a schema: `ollama` posts to /api/chat with `format`. Default: ollama on port 11434. */
  api: z.enum(['openai', 'ollama']).optional(),
  json_schema: z.boolean().default(true),
  stream: z.boolean().default(false),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.int().min(1).optional(),
});

export const replayBackendSchema = z.strictObject({
  kind: z.literal('replay'),
  ...common,
  dir: z.string().min(1),
});

export const backendSchema = z.discriminatedUnion('kind', [commandBackendSchema, openaiBackendSchema, replayBackendSchema]);

export const backendNamePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Only `backends` is read here; other top-level keys belong to other parts of refinery. */
export const configFileSchema = z.looseObject({
  backends: z.record(z.string().regex(backendNamePattern, 'backend names are letters, digits, . _ -'), backendSchema),
});

export type CommandBackendConfig = z.output<typeof commandBackendSchema>;
export type OpenAiBackendConfig = z.output<typeof openaiBackendSchema>;
export type ReplayBackendConfig = z.output<typeof replayBackendSchema>;
export type BackendConfig = z.output<typeof backendSchema>;
export type RetryConfig = z.output<typeof retrySchema>;
export type PriceConfig = z.output<typeof priceSchema>;

export interface BackendsConfig {
  /** The file it came from (for error messages), or '<inline>'. */
  file: string;
  backends: Record<string, BackendConfig>;
}
