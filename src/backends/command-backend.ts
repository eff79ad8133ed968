import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseCliOutput, kindFromText } from './cli-output.ts';
import { rememberSecretsOf, redactSecrets } from '../security/known-secrets.ts';
import { BackendError } from './errors.ts';
import { PRESETS, expandTemplate, type OutputFormat } from './presets.ts';
import { runProcess } from '../shell/run-process.ts';
import type { CommandBackendConfig } from './config-schema.ts';
import type { Backend, CallOptions, LlmRequest, LlmResult } from './types.ts';

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
    this.cacheIdentity = { executable: path.basename(this.resolved.executable), args: this.resolved.template, output: this.resolved.output };
  }

  private childEnv(): NodeJS.ProcessEnv {
    const names = [...BASE_ENV, ...(PRESET_ENV[this.config.preset ?? ''] ?? []), ...this.config.env];
    const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
    for (const key of names) if (this.env[key] !== undefined) env[key] = this.env[key];
    rememberSecretsOf(env);
    return env;
  }

  private fullPrompt(request: LlmRequest): string {
    return request.system ? `${request.system}\n\n${request.prompt}` : request.prompt;
  }

  async complete(request: LlmRequest, options: CallOptions): Promise<LlmResult> {
    const prompt = this.fullPrompt(request);
    const fileDir = this.resolved.promptVia === 'file' ? mkdtempSync(path.join(tmpdir(), 'refinery-prompt-')) : undefined;
    const promptFile = fileDir ? path.join(fileDir, 'prompt.md') : undefined;
    try {
      if (promptFile) writeFileSync(promptFile, prompt, { mode: 0o600 });
      const args = expandTemplate(this.resolved.template, { model: this.config.model, promptFile });
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
        throw new BackendError(this.name, kindFromText(tail) === 'other' ? 'process' : kindFromText(tail), `exit ${result.exitCode ?? result.signal}: ${tail}`);
      }
      return parseCliOutput(this.resolved.output, this.name, this.model, result.stdout);
    } finally {
      if (fileDir) rmSync(fileDir, { recursive: true, force: true });
    }
  }
}
