import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BackendError } from './errors.ts';
import type { ReplayBackendConfig } from './config-schema.ts';
import type { Backend, LlmRequest, LlmResult } from './types.ts';

interface Recording {
  text: string;
  /** Alternative to text: a JSON value recorded as the answer (serialized to text). */
  json?: unknown;
  model?: string;
  input_tokens?: number;
  output_tokens?: number;
  cost_usd?: number;
  /**
   * Words the prompt must contain for this recording to answer it (e.g. the deliverable's
   * name): a recording made for one deliverable never silently answers another.
   */
  prompt_contains?: string[];
}

/**
 * Answers from recorded files in `dir`, named after the request tag (`evaluate.r2` falls back to `evaluate`): `<tag>.json`
 * (`{text | json, model?, input_tokens?, output_tokens?, cost_usd?}`), `<tag>.md` or `<tag>.txt` (the text).
 */
export class ReplayBackend implements Backend {
  readonly kind = 'replay' as const;
  readonly model: string;
  readonly cacheIdentity: Readonly<Record<string, unknown>>;
  private readonly dir: string;

  constructor(
    readonly name: string,
    config: ReplayBackendConfig,
    root: string,
  ) {
    this.dir = path.resolve(root, config.dir);
    this.model = config.model ?? 'replay';
    this.cacheIdentity = { dir: config.dir };
  }

  private load(tag: string): Recording {
    if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(tag)) throw new BackendError(this.name, 'config', `invalid replay tag '${tag}'`);
    for (const ext of ['json', 'md', 'txt']) {
      const file = path.join(this.dir, `${tag}.${ext}`);
      if (!existsSync(file)) continue;
      const text = readFileSync(file, 'utf8');
      if (ext !== 'json') return { text };
      const data = JSON.parse(text) as Recording;
      if (typeof data.text === 'string') return data;
      if (data.json !== undefined) return { ...data, text: JSON.stringify(data.json) };
      throw new BackendError(this.name, 'config', `${file}: a JSON recording needs a string "text" or a "json" value`);
    }
    throw new BackendError(this.name, 'config', `no recording for '${tag}': add ${path.join(this.dir, `${tag}.json`)} (or .md/.txt)`);
  }

  /** `vote.r2` is looked up as `vote.r2`, then `vote` (dot-separated, most specific first). */
  private lookup(tag: string): Recording {
    const parts = tag.split('.');
    for (let n = parts.length; n > 1; n--) {
      const candidate = parts.slice(0, n).join('.');
      if (['json', 'md', 'txt'].some((ext) => existsSync(path.join(this.dir, `${candidate}.${ext}`)))) return this.load(candidate);
    }
    return this.load(parts[0] ?? tag);
  }

  async complete(request: LlmRequest): Promise<LlmResult> {
    const recording = this.lookup(request.tag);
    const prompt = promptText(request);
    const missing = (recording.prompt_contains ?? []).filter((word) => !prompt.includes(word));
    if (missing.length > 0) {
      throw new BackendError(
        this.name,
        'config',
        `the recording for '${request.tag}' in ${this.dir} was made for another prompt (it expects ${missing.map((w) => `'${w}'`).join(', ')} in it); record an answer for this one`,
      );
    }
    return {
      text: recording.text,
      model: recording.model ?? this.model,
      inputTokens: recording.input_tokens ?? 0,
      outputTokens: recording.output_tokens ?? 0,
      costUsd: recording.cost_usd,
      // A recording answers as it was recorded: no schema reaches anything.
      ...(request.jsonSchema ? { schemaVia: 'none' as const } : {}),
    };
  }
}

function promptText(request: LlmRequest): string {
  return [request.system ?? '', request.prompt].join('\n');
}
