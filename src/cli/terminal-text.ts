// The one gate between refinery and the terminal: every string a command prints passes through
// terminalText, so a log folder named `\e]0;PWNED\a`, a task's output or an input file's name is
// shown as text and never acted on by the terminal (window title, erased lines, hyperlinks).
import { STYLE_ESCAPE } from '../engine/diagnostics/terminal-style.ts';

/** C0 controls except newline and tab (the layout refinery prints), DEL and C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Each control character as its `\uXXXX` escape: visible, and still valid inside a JSON string. */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** What reaches the terminal: control characters escaped, then refinery's own marked styling made real. */
export function terminalText(text: string): string {
  const escaped = escapeControls(text);
  return escaped.includes(STYLE_ESCAPE) ? escaped.replaceAll(STYLE_ESCAPE, '\u001b') : escaped;
}

/** `stream` as a command sees it: whatever is written goes through terminalText, the rest is the stream's own. */
export function terminalStream<S extends NodeJS.WritableStream>(stream: S): S {
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
    return (stream.write as (...args: unknown[]) => boolean)(text === undefined ? chunk : terminalText(text), ...rest);
  };
  return new Proxy(stream, {
    get(target, key) {
      if (key === 'write') return write;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
