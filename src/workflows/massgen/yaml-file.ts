// The `yaml` library enters the massgen module here and nowhere else.
import { parse } from 'yaml';

export type YamlResult = { ok: true; value: unknown } | { ok: false; message: string };

export function parseYamlText(text: string): YamlResult {
  try {
    return { ok: true, value: parse(text, { maxAliasCount: 100, uniqueKeys: false }) as unknown };
  } catch (error) {
    return { ok: false, message: (error as Error).message.split('\n')[0] ?? 'invalid YAML' };
  }
}
