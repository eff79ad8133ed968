import { readFileSync } from 'node:fs';

/**
 * The lines of a log that commands append to, one O_APPEND write each: `+ …` as a command
 * starts, `- …` as it ends (tests of how many commands run at once).
 */
export function commandLog(file: string): string[] {
  return readFileSync(file, 'utf8').trimEnd().split('\n');
}

/** The most commands a command log shows running at once. */
export function mostAtOnce(lines: readonly string[]): number {
  let running = 0;
  let most = 0;
  for (const line of lines) {
    running += line.startsWith('+') ? 1 : -1;
    most = Math.max(most, running);
  }
  return most;
}
