// events.jsonl (spec §2.10), streamed. Each line's event_type is found by a byte scan; only the types
// the analysis uses are JSON-parsed, so the bulk (thinking/text fragments, tool results) is never decoded.
import { int, num, obj, str } from './coerce.ts';
import type { EventsSummary, WarningSink } from './model.ts';
import { stableStringify } from './parse-trace.ts';
import { forEachLine, type LineOptions } from './read-lines.ts';
import { cleanLogValue } from './log-text.ts';

const TYPE_KEY = Buffer.from('"event_type"');
const TS_KEY = Buffer.from('"timestamp"');
const TS_PREFIX = Buffer.from('{"timestamp": "');
const TS_PREFIX_COMPACT = Buffer.from('{"timestamp":"');
const CONTENT_KEY = Buffer.from('"content":');
const CROSS_MARK = Buffer.from('❌');
const CYCLE_MARK = Buffer.from('🔄');
const PARSED = new Set([
  'answer_submitted',
  'vote',
  'agent_restart',
  'error',
  'orchestrator_timeout',
  'tool_start',
  'tool_complete',
  'round_start',
]);
/** Larger tool lines are read from their head and tail only (their result text is not needed). */
const BIG_LINE = 256 * 1024;
const MAX_RECORDS = 50_000;

/**
 * Finds a key inside `buf[start, end)` with Buffer.indexOf, remembering the next hit in the same
 * buffer so lines without the key never trigger a rescan of the rest of the chunk.
 */
export class KeyFinder {
  private buf: Buffer | null = null;
  private next = -1;

  constructor(private readonly key: Buffer) {}

  find(buf: Buffer, start: number, end: number): number {
    if (buf !== this.buf || (this.next !== Infinity && this.next < start)) {
      const hit = buf.indexOf(this.key, start);
      this.buf = buf;
      this.next = hit === -1 ? Infinity : hit;
    }
    return this.next + this.key.length <= end ? this.next : -1;
  }
}

/** The string value that follows a key found at `at` (`"key": "value"`), ASCII only, or null. */
export function valueAfter(buf: Buffer, at: number, keyLength: number, end: number): string | null {
  let i = at + keyLength;
  while (i < end && (buf[i] === 0x20 || buf[i] === 0x3a)) i += 1;
  if (buf[i] !== 0x22) return null;
  const close = buf.indexOf(0x22, i + 1);
  if (close === -1 || close >= end || close - i > 200) return null;
  return buf.toString('latin1', i + 1, close);
}

/** Value of a `"key": "value"` pair found by byte search in a whole line (for tests and odd lines). */
export function scanString(line: Buffer, key: Buffer): string | null {
  const at = line.indexOf(key);
  return at === -1 ? null : valueAfter(line, at, key.length, line.length);
}

function startsWith(buf: Buffer, at: number, end: number, prefix: Buffer): boolean {
  if (end - at < prefix.length) return false;
  for (let i = 0; i < prefix.length; i += 1) if (buf[at + i] !== prefix[i]) return false;
  return true;
}

export function emptyEventsSummary(): EventsSummary {
  return {
    lines: 0,
    malformedLines: 0,
    byType: {},
    firstTimestamp: null,
    lastTimestamp: null,
    answers: [],
    votes: [],
    restarts: [],
    ignoredVotes: [],
    errors: [],
    timeouts: [],
    commands: [],
    tools: [],
    roundStarts: [],
    finalAnswerAt: null,
    postEvaluations: 0,
    droppedRecords: 0,
  };
}

export async function parseEventsFile(
  file: string,
  rel: string,
  warn: WarningSink,
  options: LineOptions = {},
): Promise<EventsSummary | null> {
  const acc = new EventsAccumulator();
  const result = await forEachLine(file, (buf, start, end, lineNo, oversized) => acc.line(buf, start, end, lineNo, oversized), options);
  if (!result.ok) {
    if (result.reason !== 'missing') warn(rel, 'unreadable', `cannot read: ${result.reason}`);
    return null;
  }
  const s = acc.summary;
  if (s.lines === 0) warn(rel, 'empty', 'file is empty (cut off before the first event?)');
  if (result.stats.endedWithoutNewline)
    warn(rel, 'truncated', `the last line (${s.lines}) has no newline: the file was cut off mid-write or is still being written`);
  if (s.malformedLines > 0)
    warn(
      rel,
      'malformed-lines',
      `${s.malformedLines} of ${s.lines} line(s) are not JSON events (first at line ${acc.firstMalformed}); skipped`,
    );
  if (result.stats.oversizedLines > 0)
    warn(rel, 'oversized-lines', `${result.stats.oversizedLines} line(s) over the line cap were read from their head and tail only`);
  if (s.droppedRecords > 0) warn(rel, 'capped', `${s.droppedRecords} record(s) beyond ${MAX_RECORDS} per kind were counted but not kept`);
  return cleanLogValue(s);
}

/** Feeds lines into an EventsSummary; exported for tests. */
export class EventsAccumulator {
  readonly summary = emptyEventsSummary();
  firstMalformed = 0;
  private readonly pendingTools = new Map<string, { name: string; agentId: string | null; command: string | null; argsKey: string }>();

  private readonly typeFinder = new KeyFinder(TYPE_KEY);
  private readonly contentFinder = new KeyFinder(CONTENT_KEY);

  line(buf: Buffer, start: number, end: number, lineNo: number, oversized: boolean): void {
    const s = this.summary;
    s.lines += 1;
    let first = start;
    while (first < end && (buf[first] === 0x20 || buf[first] === 0x09)) first += 1;
    if (first === end) return;
    const at = this.typeFinder.find(buf, first, end);
    const type = at === -1 ? null : valueAfter(buf, at, TYPE_KEY.length, end);
    if (type === null || buf[first] !== 0x7b || (!oversized && buf[end - 1] !== 0x7d)) return this.malformed(lineNo);
    const ts = this.timestamp(buf, first, end);
    s.byType[type] = (s.byType[type] ?? 0) + 1;
    if (ts !== null) {
      s.firstTimestamp ??= ts;
      s.lastTimestamp = ts;
    }
    if (type === 'text') this.text(buf, start, at, end, lineNo);
    else if (type === 'final_answer') s.finalAnswerAt ??= ts;
    else if (type === 'post_evaluation') s.postEvaluations += 1;
    else if (PARSED.has(type)) {
      if ((oversized || end - start > BIG_LINE) && (type === 'tool_start' || type === 'tool_complete')) this.bigTool(type, buf, start, end);
      else this.parsed(type, buf.subarray(start, end), lineNo);
    }
  }

  private timestamp(buf: Buffer, first: number, end: number): string | null {
    const prefix = startsWith(buf, first, end, TS_PREFIX)
      ? TS_PREFIX.length
      : startsWith(buf, first, end, TS_PREFIX_COMPACT)
        ? TS_PREFIX_COMPACT.length
        : 0;
    if (prefix > 0) {
      const close = buf.indexOf(0x22, first + prefix);
      return close !== -1 && close < end && close - first < 64 ? buf.toString('latin1', first + prefix, close) : null;
    }
    return scanString(buf.subarray(first, Math.min(end, first + 512)), TS_KEY);
  }

  private malformed(lineNo: number): void {
    this.summary.malformedLines += 1;
    if (this.firstMalformed === 0) this.firstMalformed = lineNo;
  }

  private parse(line: Buffer, lineNo: number): Record<string, unknown> | null {
    try {
      const value = obj(JSON.parse(line.toString('utf8')));
      if (!value) this.malformed(lineNo);
      return value;
    } catch {
      this.malformed(lineNo);
      return null;
    }
  }

  private push<T>(list: T[], item: T): void {
    if (list.length < MAX_RECORDS) list.push(item);
    else this.summary.droppedRecords += 1;
  }

  /** Only text fragments that start with ❌ (API errors) or 🔄 (ignored votes) are decoded. */
  private text(buf: Buffer, start: number, from: number, end: number, lineNo: number): void {
    const at = this.contentFinder.find(buf, from, end);
    if (at === -1) return;
    let content = at + CONTENT_KEY.length;
    while (content < end && buf[content] === 0x20) content += 1;
    content += 1;
    if (!startsWith(buf, content, end, CROSS_MARK) && !startsWith(buf, content, end, CYCLE_MARK)) return;
    const e = this.parse(buf.subarray(start, end), lineNo);
    const text = str(obj(e?.data)?.content) ?? '';
    const agentId = str(e?.agent_id);
    const timestamp = str(e?.timestamp);
    if (/^❌\s*Error/i.test(text))
      this.push(this.summary.errors, { agentId, timestamp, message: text.replace(/^❌\s*/, '').slice(0, 500), source: 'text' as const });
    if (/Vote for \[.*\] ignored/.test(text)) this.push(this.summary.ignoredVotes, { agentId, timestamp });
  }

  private parsed(type: string, line: Buffer, lineNo: number): void {
    const e = this.parse(line, lineNo);
    if (!e) return;
    const s = this.summary;
    const agentId = str(e.agent_id);
    const timestamp = str(e.timestamp);
    const data = obj(e.data) ?? {};
    switch (type) {
      case 'answer_submitted':
        this.push(s.answers, { agentId, label: str(data.answer_label), timestamp, content: (str(data.content) ?? '').slice(0, 500) });
        break;
      case 'vote':
        this.push(s.votes, { agentId, targetId: str(data.target_id), reason: (str(data.reason) ?? '').slice(0, 2000), timestamp });
        break;
      case 'agent_restart':
        this.push(s.restarts, { agentId, timestamp, reason: str(data.restart_reason) });
        break;
      case 'error':
        this.push(s.errors, {
          agentId,
          timestamp,
          message: (str(data.error) ?? JSON.stringify(data.error ?? '')).slice(0, 500),
          source: 'error-event' as const,
        });
        break;
      case 'orchestrator_timeout':
        this.push(s.timeouts, { timestamp, reason: (str(data.timeout_reason) ?? 'orchestrator timeout').slice(0, 500) });
        break;
      case 'round_start':
        this.push(s.roundStarts, { agentId, round: int(e.round_number) ?? 0, timestamp });
        break;
      case 'tool_start':
        this.toolStart(str(data.tool_id), str(data.tool_name) ?? 'unknown', agentId, obj(data.args));
        break;
      case 'tool_complete': {
        const result = data.result;
        const text = typeof result === 'string' ? result : JSON.stringify(result ?? '');
        const isError = data.is_error === true;
        const denied = str(data.status) === 'denied';
        // The result text is the only reason a killed run keeps (no metrics_events.json): kept for failed and denied calls.
        const reason = isError || denied ? text.slice(0, 500) : null;
        this.toolComplete(str(data.tool_id), str(data.tool_name) ?? 'unknown', agentId, num(data.elapsed_seconds), text.length, isError, {
          denied,
          reason,
        });
        break;
      }
    }
  }

  private toolStart(toolId: string | null, name: string, agentId: string | null, args: Record<string, unknown> | null): void {
    const command = str(args?.command);
    const argsKey = `${name}:${stableStringify(args ?? {}).slice(0, 500)}`;
    if (toolId !== null && this.pendingTools.size < MAX_RECORDS) this.pendingTools.set(toolId, { name, agentId, command, argsKey });
  }

  private toolComplete(
    toolId: string | null,
    name: string,
    agentId: string | null,
    seconds: number | null,
    outputChars: number,
    isError: boolean,
    outcome: { denied: boolean; reason: string | null } = { denied: false, reason: null },
  ): void {
    const start = toolId !== null ? this.pendingTools.get(toolId) : undefined;
    if (toolId !== null) this.pendingTools.delete(toolId);
    const who = agentId ?? start?.agentId ?? null;
    const { denied, reason } = outcome;
    this.push(this.summary.tools, {
      name,
      agentId: who,
      seconds,
      outputChars,
      isError,
      argsKey: start?.argsKey ?? `${name}:?`,
      denied,
      reason,
    });
    // A call a permission hook denied (MassGen 0.1.97+) never ran: it is no command and has no timing.
    if (start?.command && !denied)
      this.push(this.summary.commands, {
        agentId: who,
        command: start.command,
        source: 'events.jsonl' as const,
        seconds,
        outputChars,
        isError,
      });
  }

  /** A tool line too big to parse: fields are read from its first and last 4 KB. */
  private bigTool(type: string, buf: Buffer, start: number, end: number): void {
    const head = buf.toString('utf8', start, Math.min(end, start + 4096));
    const tail = buf.toString('utf8', Math.max(start, end - 4096), end);
    const field = (re: RegExp): string | null => re.exec(head)?.[1] ?? re.exec(tail)?.[1] ?? null;
    const toolId = field(/"tool_id":\s*"([^"]*)"/);
    const name = field(/"tool_name":\s*"([^"]*)"/) ?? 'unknown';
    const agentId = field(/"agent_id":\s*"([^"]*)"/);
    if (type === 'tool_start') {
      const command = field(/"command":\s*"((?:[^"\\]|\\.){0,2000})"/);
      this.toolStart(toolId, name, agentId, command === null ? null : { command: unescapeJson(command), truncated: true });
      return;
    }
    const seconds = field(/"elapsed_seconds":\s*([0-9.eE+-]+)/);
    const isError = /"is_error":\s*true/.test(tail);
    const denied = field(/"status":\s*"([^"]*)"/) === 'denied';
    this.toolComplete(toolId, name, agentId, seconds === null ? null : Number(seconds), end - start, isError, { denied, reason: null });
  }
}

function unescapeJson(text: string): string {
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text;
  }
}
