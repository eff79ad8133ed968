// The `yaml` library enters the massgen module here and nowhere else.
import { parse } from 'yaml';
import { cleanLogValue } from './log-text.ts';

export type YamlResult = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * A YAML file from a log, its values cleaned of secrets. `uncleaned` keeps them: only for learning
 * which values are secret (a bundle redacts a config's api_key wherever else it appears).
 */
export function parseYamlText(text: string, options: { uncleaned?: boolean } = {}): YamlResult {
  try {
    const value = parse(text, { maxAliasCount: 100, uniqueKeys: false }) as unknown;
    return { ok: true, value: options.uncleaned ? value : cleanLogValue(value) };
  } catch (error) {
    return { ok: false, message: (error as Error).message.split('\n')[0] ?? 'invalid YAML' };
  }
}
