export type OutputFormat = 'text' | 'claude-json' | 'codex-jsonl' | 'gemini-json';

export interface CommandPreset {
  executable: string;
  /** Arguments for print mode (with `extra`, e.g. a schema option, in their place); the prompt always goes through stdin. */
  args(model: string | undefined, extra?: readonly string[]): string[];
  output: OutputFormat;
  /** The CLI's own option for an answer schema, given the schema as JSON text and as a file. */
  schemaArgs?: (schema: { json: string; file: string }) => string[];
}

/** The agent CLIs in print (headless) mode, prompt on stdin, machine-readable output on stdout. */
export const PRESETS: Readonly<Record<'claude' | 'codex' | 'gemini', CommandPreset>> = {
  claude: {
    executable: 'claude',
    args: (model, extra = []) => ['-p', '--output-format', 'json', ...(model ? ['--model', model] : []), ...extra],
    output: 'claude-json',
    // The validated answer comes back as `structured_output`.
    schemaArgs: ({ json }) => ['--json-schema', json],
  },
  codex: {
    executable: 'codex',
    // `-` makes codex read the prompt from stdin; `--json` adds the usage events.
    args: (model, extra = []) => ['exec', '--json', '--skip-git-repo-check', ...(model ? ['-m', model] : []), ...extra, '-'],
    output: 'codex-jsonl',
    // OpenAI's strict subset, which every refine answer schema fits.
    schemaArgs: ({ file }) => ['--output-schema', file],
  },
  gemini: {
    executable: 'gemini',
    // gemini reads stdin as the context and appends the -p text; the real prompt is on stdin.
    args: (model) => ['--output-format', 'json', ...(model ? ['-m', model] : []), '-p', 'Follow the instructions given above.'],
    output: 'gemini-json',
  },
};

/** Substitutes `{model}`, `{prompt_file}` and `{schema_file}` inside each argument; arguments are never joined into a shell string. */
export function expandTemplate(
  template: readonly string[],
  values: { model?: string; promptFile?: string; schemaFile?: string },
): string[] {
  return template.map((arg) =>
    arg
      .replaceAll('{model}', values.model ?? '')
      .replaceAll('{prompt_file}', values.promptFile ?? '')
      .replaceAll('{schema_file}', values.schemaFile ?? ''),
  );
}
