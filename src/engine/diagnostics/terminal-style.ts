// Refinery's own terminal styling: the colours of the console view and of diagnostics, and the
// live list's redraw. Its control sequences are written with a mark this process chose at random
// instead of ESC, so the CLI's console output (src/cli/terminal-text.ts), which escapes every
// control character, can tell them from bytes that came from outside: text from a log folder's
// name, a task's output or an input file's name cannot contain a mark it never saw.
import { randomBytes } from 'node:crypto';

/** Stands for ESC in refinery's own sequences; a private-use character and 64 random bits. */
export const STYLE_ESCAPE = `\u{10FFFD}${randomBytes(8).toString('hex')}`;

/** `text` in an SGR style (31 red, 32 green, 1 bold, ...), reset by `off` (39 colour, 22 bold). */
export function styled(on: number, off: number, text: string): string {
  return `${STYLE_ESCAPE}[${on}m${text}${STYLE_ESCAPE}[${off}m`;
}

/** Moves the cursor up `lines` lines and clears from there to the end of the screen. */
export function eraseLinesAbove(lines: number): string {
  return `${STYLE_ESCAPE}[${lines}A${STYLE_ESCAPE}[0J`;
}
