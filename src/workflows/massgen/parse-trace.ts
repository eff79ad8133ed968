// execution_trace.md (spec §2.8): loose markdown. Parsed by its `### <Kind>` headings only; fenced
// blocks are treated leniently because tool results are not escaped.
import { obj, str } from './coerce.ts';
import type { ExecutionTrace, TraceToolCall } from './model.ts';

const HEADING = /^### (Tool Call|Tool Result|Tool Error|Reasoning|Content|Vote Cast|Injected Context)(?::\s*(.*))?$/;

interface Block {
  kind: string;
  name: string;
  body: string[];
}

export function parseTrace(text: string): ExecutionTrace {
  const lines = text.split(/\r?\n/);
  const agent = /^# Execution Trace:\s*(.+)$/.exec(lines[0] ?? '')?.[1]?.trim() ?? null;
  const header = /\*\*Model\*\*:\s*(.*?)\s*\|\s*\*\*Started\*\*:\s*(.*)$/.exec(lines[1] ?? '');
  const blocks = splitBlocks(lines);
  const calls: TraceToolCall[] = [];
  let reasoningChars = 0;
  let votesCast = 0;
  for (const block of blocks) {
    if (block.kind === 'Tool Call') calls.push(toolCall(block));
    else if (block.kind === 'Tool Result' || block.kind === 'Tool Error') attachResult(calls, block);
    else if (block.kind === 'Reasoning') reasoningChars += block.body.join('\n').trim().length;
    else if (block.kind === 'Vote Cast') votesCast += 1;
  }
  return { agentId: agent, model: header?.[1] ?? null, started: header?.[2]?.trim() ?? null, toolCalls: calls, reasoningChars, votesCast };
}

function splitBlocks(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let current: Block | null = null;
  for (const line of lines) {
    const match = HEADING.exec(line);
    if (match) {
      current = { kind: match[1] ?? '', name: (match[2] ?? '').trim(), body: [] };
      blocks.push(current);
    } else if (line.startsWith('## Errors')) {
      current = null;
    } else if (current) {
      current.body.push(line);
    }
  }
  return blocks;
}

/** Text between the first fence line and the last fence line of a block (or the whole body). */
function fenced(body: string[]): string {
  const first = body.findIndex((l) => l.startsWith('```'));
  if (first === -1) return body.join('\n').trim();
  let last = -1;
  for (let i = body.length - 1; i > first; i -= 1) {
    if (body[i]?.trim() === '```') {
      last = i;
      break;
    }
  }
  return body.slice(first + 1, last === -1 ? body.length : last).join('\n');
}

function toolCall(block: Block): TraceToolCall {
  const argsText = fenced(block.body);
  let args: unknown = null;
  try {
    args = JSON.parse(argsText);
  } catch {
    args = null;
  }
  const command = str(obj(args)?.command);
  return {
    tool: block.name || 'unknown',
    command,
    argsKey: `${block.name}:${(args === null ? argsText : stableStringify(args)).slice(0, 500)}`,
    resultChars: null,
    isError: false,
  };
}

function attachResult(calls: TraceToolCall[], block: Block): void {
  const pending = calls.find((c) => c.tool === block.name && c.resultChars === null);
  if (!pending) return;
  pending.resultChars = fenced(block.body).length;
  pending.isError = block.kind === 'Tool Error';
}

/** JSON with object keys sorted, so equal arguments give equal keys. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const o = obj(value);
  if (o) {
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
