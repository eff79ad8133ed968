// Whole-file JSON reading for the small end-of-run files, with a size cap and located warnings.
import { readCapped } from './fs-safe.ts';
import type { WarningSink } from './model.ts';

export const JSON_FILE_CAP = 256 * 1024 * 1024;

/** Parsed JSON, or undefined when the file is missing (no warning) or unreadable (warning). */
export async function readJsonFile(file: string, rel: string, warn: WarningSink, maxBytes = JSON_FILE_CAP): Promise<unknown> {
  const read = await readCapped(file, maxBytes);
  if (!read.ok) {
    if (read.reason !== 'missing') warn(rel, 'unreadable', `cannot read: ${read.reason}`);
    return undefined;
  }
  if (read.truncated) {
    warn(rel, 'too-large', `file is ${read.bytes} bytes, over the ${maxBytes}-byte cap; skipped`);
    return undefined;
  }
  return parseJsonText(read.text, rel, warn);
}

export function parseJsonText(text: string, rel: string, warn: WarningSink): unknown {
  if (text.trim() === '') {
    warn(rel, 'empty', 'file is empty (cut off before anything was written?); ignored');
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const message = (error as Error).message;
    const hint = /end of|Unterminated|Unexpected end/i.test(message) ? ' (the file looks cut off mid-write)' : '';
    warn(rel, 'invalid-json', `invalid JSON${hint}: ${message.slice(0, 200)}; ignored`);
    return undefined;
  }
}
