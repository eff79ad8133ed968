import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseCliOutput, kindFromText } from './cli-output.ts';
import { rememberSecretsOf, redactSecrets } from '../../security/known-secrets.ts';
import { BackendError } from './errors.ts';
import { PRESETS, expandTemplate, type OutputFormat } from './presets.ts';
import { promptWithSchema } from './schema-prompt.ts';
import { runProcess } from '../../engine/shell/run-process.ts';
import type { CommandBackendConfig } from './config-schema.ts';
import type { Backend, CallOptions, LlmRequest, LlmResult, SchemaVia } from './types.ts';

const BASE_ENV = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];
const PRESET_ENV: Record<string, string[]> = {
  claude: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'CLAUDE_CONFIG_DIR'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'CODEX_HOME', 'OPENAI_BASE_URL'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_GENAI_USE_VERTEXAI'],
};

interface Resolved {
  executable: string;
  template: string[];
  promptVia: 'stdin' | 'file';
  output: OutputFormat;
}

/** The arguments, prompt and schema route of one call. */
interface Invocation {
  template: readonly string[];
  prompt: string;
  schemaVia?: SchemaVia;
  /** Whether the schema must be written to a file for the arguments. */
  schemaFile: boolean;
}

function resolve(name: string, config: CommandBackendConfig): Resolved {
  if (config.preset) {
    const preset = PRESETS[config.preset];
    return {
      executable: config.executable ?? preset.executable,
      template: [...preset.args(config.model), ...config.extra_args],
      promptVia: 'stdin',
      output: config.output ?? preset.output,
    };
  }
  const [executable, ...args] = config.command ?? [];
  if (!executable) throw new BackendError(name, 'config', "a command backend needs 'preset' or 'command' (an argument array)");
  const usesFile = args.some((arg) => arg.includes('{prompt_file}'));
  return {
    executable: config.executable ?? executable,
    template: [...args, ...config.extra_args],
    promptVia: config.prompt_via ?? (usesFile ? 'file' : 'stdin'),
    output: config.output ?? 'text',
  };
}

/** An agent CLI (or any program) run once per call; the prompt goes through stdin or a file, never argv text. */
export class CommandBackend implements Backend {
  readonly kind = 'command' as const;
  readonly model: string;
  readonly cacheIdentity: Readonly<Record<string, unknown>>;
  private readonly resolved: Resolved;

  constructor(
    readonly name: string,
    private readonly config: CommandBackendConfig,
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    this.resolved = resolve(name, config);
    this.model = config.model ?? config.preset ?? path.basename(this.resolved.executable);
    this.cacheIdentity = {
      executable: path.basename(this.resolved.executable),
      args: this.resolved.template,
      output: this.resolved.output,
    };
  }

  private childEnv(): NodeJS.ProcessEnv {
    const names = [...BASE_ENV, ...(PRESET_ENV[this.config.preset ?? ''] ?? []), ...this.config.env];
    const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
    for (const key of names) if (this.env[key] !== undefined) env[key] = this.env[key];
    rememberSecretsOf(env);
    return env;
  }

  private fullPrompt(request: LlmRequest, prompt: string): string {
    return request.system ? `${request.system}\n\n${prompt}` : prompt;
  }

  /** The schema goes through the CLI's own option (a preset's, or a `{schema_file}` argument), else into the prompt. */
  private invocation(request: LlmRequest): Invocation {
    if (!request.jsonSchema)
      return { template: this.resolved.template, prompt: this.fullPrompt(request, request.prompt), schemaFile: false };
    const preset = this.config.preset ? PRESETS[this.config.preset] : undefined;
    if (preset?.schemaArgs) {
      const extra = preset.schemaArgs({ json: JSON.stringify(request.jsonSchema.schema), file: '{schema_file}' });
      const template = [...preset.args(this.config.model, extra), ...this.config.extra_args];
      return {
        template,
        prompt: this.fullPrompt(request, request.prompt),
        schemaVia: 'cli_option',
        schemaFile: extra.some((a) => a.includes('{schema_file}')),
      };
    }
    if (this.resolved.template.some((arg) => arg.includes('{schema_file}')))
      return {
        template: this.resolved.template,
        prompt: this.fullPrompt(request, request.prompt),
        schemaVia: 'cli_option',
        schemaFile: true,
      };
    return {
      template: this.resolved.template,
      prompt: this.fullPrompt(request, promptWithSchema(request)),
      schemaVia: 'prompt',
      schemaFile: false,
    };
  }

  async complete(request: LlmRequest, options: CallOptions): Promise<LlmResult> {
    const call = this.invocation(request);
    const prompt = call.prompt;
    const fileDir =
      this.resolved.promptVia === 'file' || call.schemaFile ? mkdtempSync(path.join(tmpdir(), 'refinery-prompt-')) : undefined;
    const promptFile = fileDir && this.resolved.promptVia === 'file' ? path.join(fileDir, 'prompt.md') : undefined;
    const schemaFile = fileDir && call.schemaFile ? path.join(fileDir, 'schema.json') : undefined;
    try {
      if (promptFile) writeFileSync(promptFile, prompt, { mode: 0o600 });
      if (schemaFile) writeFileSync(schemaFile, JSON.stringify(request.jsonSchema?.schema), { mode: 0o600 });
      const args = expandTemplate(call.template, { model: this.config.model, promptFile, schemaFile });
      const result = await runProcess({
        executable: this.resolved.executable,
        args,
        cwd: this.cwd,
        env: this.childEnv(),
        stdin: promptFile ? undefined : prompt,
        timeoutMs: this.config.timeout_s * 1000,
        signal: options.signal,
      }).catch((error: NodeJS.ErrnoException) => {
        const hint = error.code === 'ENOENT' ? ` (not found: install it, put it on PATH or set 'executable:' in the config)` : '';
        throw new BackendError(this.name, 'config', `cannot start '${this.resolved.executable}'${hint}: ${error.message}`);
      });
      if (result.aborted) throw new BackendError(this.name, 'aborted', 'call aborted');
      if (result.timedOut) throw new BackendError(this.name, 'timeout', `no answer within ${this.config.timeout_s} s`);
      if (result.exitCode !== 0) {
        try {
          parseCliOutput(this.resolved.output, this.name, this.model, result.stdout);
        } catch (error) {
          if (error instanceof BackendError && error.kind !== 'bad_response') throw error;
        }
        const tail = redactSecrets(`${result.stderr}\n${result.stdout}`).trim().slice(-400);
        throw new BackendError(
          this.name,
          kindFromText(tail) === 'other' ? 'process' : kindFromText(tail),
          `exit ${result.exitCode ?? result.signal}: ${tail}`,
        );
      }
      const parsed = parseCliOutput(this.resolved.output, this.name, this.model, result.stdout);
      return call.schemaVia ? { ...parsed, schemaVia: call.schemaVia } : parsed;
    } finally {
      if (fileDir) rmSync(fileDir, { recursive: true, force: true });
    }
  }
}
