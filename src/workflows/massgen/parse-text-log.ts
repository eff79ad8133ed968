// massgen.log / massgen_debug.log (spec §2.12) and streaming_debug.log (§2.11), streamed.
// Only lines that look like errors, exceptions, timeouts or commands are decoded.
import type { CommandRecord, TextLogSummary, WarningSink } from './model.ts';
import { forEachLine, type LineOptions } from './read-lines.ts';
import { LOG_MARKER_HINT, markerOfLogLine } from './session-marker.ts';
import { cleanLogValue } from './log-text.ts';

const LEVEL = /^(\d{2}:\d{2}:\d{2})(?:\.\d+)?\s*\|\s*([A-Z]+)\s*\|/;
const COMMAND_KEY = Buffer.from('"command"');
const TRACEBACK = Buffer.from('Traceback');
const KEEP = 200;
const MCP = Buffer.from('MCP');
/**
 * MassGen logs MCP trouble through `_log_mcp_activity` (massgen/mcp_tools), which writes at INFO level
 * ("MCP unexpected error …", "MCP: … failed"): no ERROR line, no failed tool call anywhere else.
 */
const MCP_ERROR = /\bMCP\b[^|]*?\b(error|errors|failed|failure|exception|disconnected|not connected|timed out|timeout)\b/i;

export function emptyTextLogSummary(): TextLogSummary {
  return { lines: 0, byLevel: {}, errors: [], exceptions: [], timeouts: [], commands: [], sessionMarkers: [], mcpErrors: [] };
}

export async function parseTextLog(
  file: string,
  rel: string,
  warn: WarningSink,
  kind: 'massgen' | 'streaming',
  options: LineOptions = {},
): Promise<TextLogSummary | null> {
  const acc = new TextLogAccumulator(kind);
  const result = await forEachLine(file, (buf, start, end, lineNo) => acc.line(buf.subarray(start, end), lineNo), options);
  if (!result.ok) {
    if (result.reason !== 'missing') warn(rel, 'unreadable', `cannot read: ${result.reason}`);
    return null;
  }
  if (result.stats.endedWithoutNewline)
    warn(rel, 'truncated', 'the file does not end with a newline (cut off mid-write or still being written)');
  const levels = Object.values(acc.summary.byLevel).reduce((sum, n) => sum + n, 0);
  if (kind === 'massgen' && acc.summary.lines === 0) warn(rel, 'empty', 'file is empty');
  else if (kind === 'massgen' && levels === 0)
    warn(rel, 'unrecognized', 'no line has the `HH:MM:SS | LEVEL | message` form; the file is not a MassGen log or is corrupted');
  return cleanLogValue(acc.summary);
}

/** Feeds lines into a TextLogSummary; exported for tests. */
export class TextLogAccumulator {
  readonly summary = emptyTextLogSummary();
  private lastTime: string | null = null;

  constructor(private readonly kind: 'massgen' | 'streaming') {}

  line(line: Buffer, lineNo: number): void {
    const s = this.summary;
    s.lines += 1;
    const head = line.toString('latin1', 0, Math.min(line.length, 48));
    const match = LEVEL.exec(head);
    if (match) {
      this.lastTime = match[1] ?? null;
      const level = match[2] ?? 'UNKNOWN';
      s.byLevel[level] = (s.byLevel[level] ?? 0) + 1;
      if (level === 'ERROR' || level === 'CRITICAL') this.keep(s.errors, { line: lineNo, time: this.lastTime, message: message(line) });
      if (level !== 'DEBUG' && this.kind === 'massgen' && line.includes(MCP)) {
        const text = message(line);
        if (MCP_ERROR.test(text)) this.keep(s.mcpErrors, { line: lineNo, level, message: text });
      }
      if (level === 'INFO' && this.kind === 'massgen' && s.sessionMarkers.length < 10 && line.includes(LOG_MARKER_HINT)) {
        const marker = markerOfLogLine(line.toString('utf8', 0, Math.min(line.length, 400)));
        if (marker) s.sessionMarkers.push({ line: lineNo, ...marker });
      }
      if (
        (level === 'WARNING' || level === 'ERROR') &&
        /time(d)?[ _-]?out/i.test(head + line.toString('utf8', 48, Math.min(line.length, 400)))
      ) {
        this.keep(s.timeouts, { line: lineNo, message: message(line) });
      }
    }
    if (line.subarray(0, 16).includes(TRACEBACK) || /^[A-Za-z_.]*(Error|Exception): /.test(head)) {
      this.keep(s.exceptions, { line: lineNo, message: line.toString('utf8', 0, Math.min(line.length, 300)) });
    }
    if (this.kind === 'streaming' && line.includes(COMMAND_KEY)) this.commands(line);
  }

  private keep<T>(list: T[], item: T): void {
    if (list.length < KEEP) list.push(item);
  }

  private commands(line: Buffer): void {
    const text = line.toString('utf8');
    for (const m of text.matchAll(/\\?"command\\?"\s*:\s*\\?"((?:[^"\\]|\\.)*?)\\?"/g)) {
      const command = (m[1] ?? '').replace(/\\\\/g, '\\').replace(/\\"/g, '"').replace(/\\n/g, '\n');
      if (command && this.summary.commands.length < 50_000) {
        const record: CommandRecord = {
          agentId: agentOf(text),
          command,
          source: 'streaming_debug.log',
          seconds: null,
          outputChars: null,
          isError: false,
        };
        this.summary.commands.push(record);
      }
    }
  }
}

function message(line: Buffer): string {
  const text = line.toString('utf8', 0, Math.min(line.length, 600));
  const parts = text.split('|');
  return (parts.length >= 3 ? parts.slice(2).join('|') : text).trim().slice(0, 500);
}

function agentOf(text: string): string | null {
  return /source='([^']+)'/.exec(text)?.[1] ?? /\[([A-Za-z0-9_.-]+)\]/.exec(text)?.[1] ?? null;
}
