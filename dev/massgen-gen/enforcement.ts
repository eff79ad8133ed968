// What each enforcement reason code looks like in status.json reliability entries and in the
// text stream (orchestrator.py track_enforcement_event callers, as seen in the real fixtures).
import type { ReasonCode } from './model.ts';

export const WORKFLOW_ERROR_CODES: ReadonlySet<string> = new Set([
  'vote_no_answers',
  'vote_and_answer',
  'invalid_vote_id',
  'answer_limit',
  'answer_novelty',
  'answer_duplicate',
]);

const MUST_USE = 'You must use workflow tools (vote or new_answer) to complete the task.';
export const API_500 =
  "Error code: 500 - {'error': {'message': 'Injected internal server error', 'type': 'server_error', 'code': 'fake_500'}}";

export interface EnforcementShape {
  toolCalls: string[];
  errorMessage: string;
  /** streamed before the retry; null = nothing buffered */
  buffer: string | null;
  /** text events emitted before the "❌ Retry" line */
  streamed: string[];
}

export function enforcementShape(
  reason: ReasonCode,
  ctx: { question: string; anonIds: string[]; anonSelf: string; draft: string },
): EnforcementShape {
  switch (reason) {
    case 'vote_no_answers':
      return {
        toolCalls: ['vote'],
        errorMessage: 'Cannot vote when no answers exist. Use new_answer tool.',
        buffer: `\n\n[Tool Call: vote({"agent_id":"${ctx.anonIds[1] ?? ctx.anonSelf}","reason":"Voting before any answer exists."})]`,
        streamed: [],
      };
    case 'vote_and_answer':
      return {
        toolCalls: ['vote', 'new_answer'],
        errorMessage:
          "Cannot use both 'vote' and 'new_answer' in same response. Choose one: vote for existing answer OR provide new answer.",
        buffer: `\n\n[Tool Call: vote({"agent_id":"${ctx.anonSelf}","reason":"Voting and answering at once."})]\n\n[Tool Call: new_answer({"content":${JSON.stringify(`${ctx.draft} (sent together with a vote)`)}})]`,
        streamed: [],
      };
    case 'invalid_vote_id':
      return {
        toolCalls: ['vote'],
        errorMessage: `Invalid agent_id 'agent9'. Valid agents: ${ctx.anonIds.join(', ')}`,
        buffer: '\n\n[Tool Call: vote({"agent_id":"agent9","reason":"agent9 looked best."})]',
        streamed: [],
      };
    case 'no_tool_calls': {
      const text = 'I think the answers above are all reasonable; the first one reads best to me.';
      return { toolCalls: [], errorMessage: MUST_USE, buffer: text, streamed: [text] };
    }
    case 'no_workflow_tool':
      return {
        toolCalls: ['web_search'],
        errorMessage: MUST_USE,
        buffer: `Let me look this up first.\n\n[Tool Call: web_search({"query":${JSON.stringify(ctx.question)}})]`,
        streamed: ['Let me look this up first.', '⚠️ Unknown tool: web_search (not registered)🔧 used web_search tool (not implemented)'],
      };
    case 'api_error':
      return { toolCalls: [], errorMessage: API_500, buffer: null, streamed: [`❌ Error: ${API_500}\n`] };
  }
}

export const MUST_USE_WORKFLOW = MUST_USE;

/** Python len(): code points, not UTF-16 units. */
export const pyLen = (text: string): number => [...text].length;
export const pyPrefix = (text: string, n: number): string => [...text].slice(0, n).join('');
