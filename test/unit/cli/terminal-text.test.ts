import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { escapeControls, terminalStream, terminalText } from '../../../src/cli/terminal-text.ts';
import { eraseLinesAbove, STYLE_ESCAPE, styled } from '../../../src/engine/diagnostics/terminal-style.ts';

describe('terminal text', () => {
  it('escapeControls - C0 (but newline and tab), DEL and C1 become \\uXXXX; other text is unchanged', () => {
    expect(escapeControls('a\u001b]0;x\u0007b\r\n\tc\u007f\u009bd é ✓')).toBe('a\\u001b]0;x\\u0007b\\u000d\n\tc\\u007f\\u009bd é ✓');
  });

  it('escapeControls - inside a JSON line the escapes still decode to the same characters', () => {
    const line = JSON.stringify({ name: 'x\u009by\u007f' });
    expect(JSON.parse(escapeControls(line))).toEqual({ name: 'x\u009by\u007f' });
  });

  it("terminalText - refinery's own colours and redraw reach the terminal; the same bytes from outside do not", () => {
    const text = `${styled(31, 39, 'error')} ${eraseLinesAbove(2)} from a log: \u001b[31mred\u001b[2K`;
    expect(terminalText(text)).toBe('\u001b[31merror\u001b[39m \u001b[2A\u001b[0J from a log: \\u001b[31mred\\u001b[2K');
  });

  it('terminalText - a look-alike of the style mark (same private-use character, other digits) stays text', () => {
    const forged = `\u{10FFFD}${'0'.repeat(16)}[2K`;
    expect(STYLE_ESCAPE).not.toBe(forged.slice(0, -3));
    expect(terminalText(forged)).toBe(forged);
  });

  it('terminalStream - strings and buffers written are escaped; the stream keeps its own properties', () => {
    const sink = new PassThrough() as PassThrough & { isTTY?: boolean };
    sink.isTTY = true;
    const out = terminalStream(sink);
    out.write('a\u001bb\n');
    out.write(Buffer.from('c\u0007d\n'));
    expect(out.isTTY).toBe(true);
    expect(String(sink.read())).toBe('a\\u001bb\nc\\u0007d\n');
  });
});
