// Values read from logs and model answers, escaped for the place they land in a Markdown report:
// running text, a table cell, a code span, a Mermaid label. Whatever the value holds, it stays one
// inline piece of text: it cannot start a heading, a list, a fence or a quote, open raw HTML, a link
// or an image, add a table column, or end the code span or the Mermaid block it sits in.

const LINE_BREAKS = /[\r\n\u000b\u000c\u0085\u2028\u2029]+/g;
// Other control characters (NUL, ESC...) have no business in a report.
const CONTROLS = /[\u0000-\u0008\u000e-\u001f\u007f]/g;

function oneLine(value: string): string {
  return value.replace(LINE_BREAKS, ' ').replace(CONTROLS, '').replace(/\t/g, ' ');
}

/** Inline Markdown, literal: no HTML, entity, emphasis, code, link, image, strikethrough, pipe or heading. */
function inline(value: string): string {
  return (
    oneLine(value)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/[\\`*[\]|~#]/g, '\\$&')
      // Underscores inside words never make emphasis; at a word's edge they can.
      .replace(/(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, '\\_')
  );
}

/**
 * Markdown running text (a paragraph, a list item, bold text): literal, on one line. A list item's
 * text may start a block of its own (`- - x`, `- 1. x`), so a leading marker is escaped too.
 */
export function mdText(value: string | number | boolean): string {
  return inline(String(value))
    .replace(/^(\s*)([-+=])/, '$1\\$2')
    .replace(/^(\s*\d+)([.)])/, '$1\\$2');
}

/** A GitHub table cell (inline content only): never empty (`-`), pipes escaped so the row keeps its columns. */
export function mdCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined || value === '') return '-';
  return typeof value === 'string' ? inline(value) : String(value);
}

/** The backticks that wrap `text` as a code span: one more than its longest backtick run. */
function codeSpan(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') || (text.startsWith(' ') && text.endsWith(' ') && text.trim() !== '') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** A code span in running text: shown literally, whatever backticks it holds. */
export function mdCode(value: string): string {
  const text = oneLine(value);
  return text.trim() === '' ? '` `' : codeSpan(text);
}

/** A code span inside a table cell: as mdCode, with pipes escaped (GitHub splits cells before it reads spans). */
export function mdCodeCell(value: string): string {
  return mdCode(value).replace(/\|/g, '\\|');
}

/**
 * A label in a Mermaid chart (a flowchart node or edge label in double quotes, a gantt section or
 * task name, an xychart title): letters, digits, spaces and harmless punctuation only, so it can
 * neither end its quotes, its statement or the block, nor carry HTML or entity codes.
 */
export function mermaidLabel(value: string, max = 60): string {
  const kept = oneLine(value).replace(/[^\p{L}\p{N} _.,+/=@()'!?-]/gu, ' ');
  return kept.replace(/\s+/g, ' ').trim().slice(0, max).trim() || '?';
}
