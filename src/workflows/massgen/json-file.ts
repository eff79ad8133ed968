// Whole-file JSON reading for the small end-of-run files, with a size cap and located warnings.
import { lstatSafe, readCapped } from './fs-safe.ts';
import type { WarningSink } from './model.ts';
import { cleanLogValue } from './log-text.ts';

/**
 * Largest end-of-run JSON file read whole. JSON.parse needs several times the file's size
 * (a 100 MB status.json took 718 MB): a bigger file is skipped with a warning, not read.
 */
export const JSON_FILE_CAP = 16 * 1024 * 1024;

/** Parsed JSON, or undefined when the file is missing (no warning), too large or unreadable (warning). */
export async function readJsonFile(file: string, rel: string, warn: WarningSink, maxBytes = JSON_FILE_CAP): Promise<unknown> {
  const info = await lstatSafe(file);
  if (info?.kind === 'file' && info.bytes > maxBytes) {
    warn(
      rel,
      'too-large',
      `file is ${info.bytes} bytes, over the ${maxBytes}-byte limit for a JSON file read whole; skipped to keep memory bounded (the analyze pipeline's max_json_mb param raises the limit)`,
    );
    return undefined;
  }
  const read = await readCapped(file, maxBytes);
  if (!read.ok) {
    if (read.reason !== 'missing') warn(rel, 'unreadable', `cannot read: ${read.reason}`);
    return undefined;
  }
  if (read.truncated) {
    warn(rel, 'too-large', `file grew to ${read.bytes} bytes while read, over the ${maxBytes}-byte limit; skipped`);
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
    return cleanLogValue(JSON.parse(text) as unknown);
  } catch (error) {
    const message = (error as Error).message;
    const hint = /end of|Unterminated|Unexpected end/i.test(message) ? ' (the file looks cut off mid-write)' : '';
    warn(rel, 'invalid-json', `invalid JSON${hint}: ${message.slice(0, 200)}; ignored`);
    return undefined;
  }
}
