// Checks parsed JSON against the expected types of the fields the analysis reads (spec §2, §8), so a
// value of the wrong type is reported as one warning per file instead of silently becoming a default.
import type { WarningSink } from './model.ts';

type Leaf = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';
export type Shape = Leaf | { $oneOf: Shape[] } | { $array: Shape } | { [key: string]: Shape };

const oneOf = (...alts: Shape[]): Shape => ({ $oneOf: alts });
const arrayOf = (item: Shape): Shape => ({ $array: item });
const num: Leaf = 'number';
const str: Leaf = 'string';
const strN = oneOf('string', 'null');
const numN = oneOf('number', 'null');
const orNull = (s: Shape): Shape => oneOf(s, 'null');
const tokens: Shape = { input_tokens: num, output_tokens: num, reasoning_tokens: num, cached_input_tokens: num, estimated_cost: num };
const round: Shape = arrayOf({
  round_number: num,
  agent_id: str,
  round_type: str,
  outcome: str,
  input_tokens: num,
  output_tokens: num,
  estimated_cost: num,
  start_time: num,
  end_time: num,
  duration_ms: num,
  tool_calls_count: num,
});
const toolAgg: Shape = { call_count: num, failure_count: num, total_execution_time_ms: num, total_output_chars: num };
const toolMetrics: Shape = { total_calls: num, total_failures: num, by_tool: { '*': toolAgg } };

export const SHAPES: Record<string, Shape> = {
  'status.json': {
    finish_reason: strN,
    finish_reason_details: strN,
    is_complete: 'boolean',
    meta: { last_updated: num, question: strN, start_time: numN, elapsed_seconds: num },
    costs: { total_estimated_cost: num },
    coordination: { phase: str },
    agents: {
      '*': {
        status: str,
        answer_count: num,
        latest_answer_label: strN,
        times_restarted: num,
        last_activity: numN,
        error: oneOf('object', 'null'),
        token_usage: orNull(tokens),
        round_history: orNull(round),
        tool_metrics: orNull(toolMetrics),
        reliability: orNull({
          enforcement_attempts: arrayOf({
            round: num,
            attempt: num,
            reason: str,
            tool_calls: arrayOf(str),
            error_message: strN,
            buffer_chars: num,
            timestamp: num,
          }),
          total_buffer_chars_lost: num,
        }),
      },
    },
    results: { votes: { '*': num }, winner: strN },
  },
  'metrics_summary.json': {
    meta: { question: strN, winner: strN, num_agents: num },
    totals: { estimated_cost: num, subagent_cost: num, input_tokens: num, output_tokens: num, reasoning_tokens: num },
    tools: toolMetrics,
    api_timing: {
      total_calls: num,
      total_time_ms: num,
      avg_time_ms: num,
      avg_ttft_ms: num,
      by_backend: { '*': { calls: num, time_ms: num } },
    },
    agents: { '*': { token_usage: orNull(tokens), round_history: orNull(round) } },
  },
  'metrics_events.json': {
    tool_executions: arrayOf({
      tool_name: str,
      agent_id: strN,
      start_time: num,
      execution_time_ms: num,
      success: 'boolean',
      error_message: strN,
      output_chars: num,
    }),
  },
  'coordination_events.json': {
    session_metadata: { user_prompt: strN, agent_ids: arrayOf(str), start_time: numN, end_time: numN, final_winner: strN },
    events: arrayOf({
      timestamp: num,
      event_type: str,
      agent_id: strN,
      details: str,
      context: { label: str, voted_for: str, voted_for_label: strN, reason: str },
    }),
  },
  'snapshot_mappings.json': {
    '*': {
      type: str,
      label: str,
      agent_id: str,
      timestamp: str,
      voted_for: str,
      voted_for_label: strN,
      iteration: numN,
      round: numN,
      path: str,
    },
  },
  'vote.json': {
    voter_id: str,
    voted_for: str,
    voted_for_label: strN,
    reason: str,
    unix_timestamp: num,
    iteration: numN,
    coordination_round: numN,
    available_options: arrayOf(str),
  },
};

function leafOf(value: unknown): Leaf {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : (typeof value as Leaf);
}

function describe(shape: Shape): string {
  if (typeof shape === 'string') return shape;
  if ('$oneOf' in shape) return (shape.$oneOf as Shape[]).map(describe).join('|');
  return '$array' in shape ? 'array' : 'object';
}

function matches(value: unknown, shape: Shape, at: string, out: string[]): void {
  const found = leafOf(value);
  const here = at || '/';
  if (typeof shape === 'string') {
    if (found !== shape) out.push(`${here} (${found}, expected ${shape})`);
    return;
  }
  if ('$oneOf' in shape) {
    const alts = shape.$oneOf as Shape[];
    const fitting = alts.find(
      (alt) =>
        describe(alt) === found ||
        (typeof alt !== 'string' && !('$oneOf' in alt) && ('$array' in alt ? found === 'array' : found === 'object')),
    );
    if (fitting === undefined) out.push(`${here} (${found}, expected ${describe(shape)})`);
    else matches(value, fitting, at, out);
    return;
  }
  if ('$array' in shape) {
    if (!Array.isArray(value)) out.push(`${here} (${found}, expected array)`);
    else value.forEach((item, i) => matches(item, shape.$array as Shape, `${at}/${i}`, out));
    return;
  }
  if (found !== 'object') {
    out.push(`${here} (${found}, expected object)`);
    return;
  }
  const obj = value as Record<string, unknown>;
  const fields = shape as Record<string, Shape>;
  for (const key of Object.keys(obj)) {
    const sub = Object.hasOwn(fields, key) ? fields[key] : fields['*'];
    if (sub !== undefined && obj[key] !== undefined) matches(obj[key], sub, `${at}/${key}`, out);
  }
}

/** Problems as JSON pointers with the found and expected types. Missing keys are not problems. */
export function shapeProblems(value: unknown, shape: Shape): string[] {
  const out: string[] = [];
  matches(value, shape, '', out);
  return out;
}

export function checkShape(value: unknown, kind: keyof typeof SHAPES | string, rel: string, warn: WarningSink): void {
  const shape = SHAPES[kind];
  if (value === undefined || !shape) return;
  const problems = shapeProblems(value, shape);
  if (problems.length === 0) return;
  const shown = problems.slice(0, 5).join(', ');
  warn(
    rel,
    'wrong-type',
    `unexpected value types at ${shown}${problems.length > 5 ? ` and ${problems.length - 5} more` : ''}; those values were ignored or defaulted`,
  );
}
