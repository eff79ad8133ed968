export type OutputFormat = 'text' | 'claude-json' | 'codex-jsonl' | 'gemini-json';

export interface CommandPreset {
  executable: string;
  /** Arguments for print mode; the prompt always goes through stdin. */
  args(model: string | undefined): string[];
  output: OutputFormat;
}

/** The agent CLIs in print (headless) mode, prompt on stdin, machine-readable output on stdout. */
export const PRESETS: Readonly<Record<'claude' | 'codex' | 'gemini', CommandPreset>> = {
  claude: {
    executable: 'claude',
    args: (model) => ['-p', '--output-format', 'json', ...(model ? ['--model', model] : [])],
    output: 'claude-json',
  },
  codex: {
    executable: 'codex',
    // `-` makes codex read the prompt from stdin; `--json` adds the usage events.
    args: (model) => ['exec', '--json', '--skip-git-repo-check', ...(model ? ['-m', model] : []), '-'],
    output: 'codex-jsonl',
  },
  gemini: {
    executable: 'gemini',
    // gemini reads stdin as the context and appends the -p text; the real prompt is on stdin.
    args: (model) => ['--output-format', 'json', ...(model ? ['-m', model] : []), '-p', 'Follow the instructions given above.'],
    output: 'gemini-json',
  },
};

/** Substitutes `{model}` and `{prompt_file}` inside each argument; arguments are never joined into a shell string. */
export function expandTemplate(template: readonly string[], values: { model?: string; promptFile?: string }): string[] {
  return template.map((arg) => arg.replaceAll('{model}', values.model ?? '').replaceAll('{prompt_file}', values.promptFile ?? ''));
}
