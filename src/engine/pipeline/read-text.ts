import { readFileSync } from 'node:fs';
import type { Diagnostic } from '../types/source.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A pipeline file's text, or one diagnostic saying why there is none. A binary or non-UTF-8
 * file (`refinery run /bin/ls`) is one line, not a page of YAML errors and control bytes.
 */
export function readPipelineText(file: string, shown: string = file): { text: string } | { diagnostic: Diagnostic } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : String(code);
    return { diagnostic: { severity: 'error', code: 'unreadable-file', message: `cannot read pipeline file ${shown}: ${why}` } };
  }
  let text: string | undefined;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = undefined;
  }
  if (text === undefined || text.includes('\0')) {
    return {
      diagnostic: {
        severity: 'error',
        code: 'not-text',
        message: `${shown}: not a text file (binary or not UTF-8); a pipeline file is YAML text`,
      },
    };
  }
  return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}
