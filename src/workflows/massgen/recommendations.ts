// Recommendations derived by fixed rules from the analysis; each cites the JSON pointers it used.
import type { Recommendation, TurnAnalysis } from './analysis-model.ts';
import { EXCESSIVE_OUTPUT_CHARS } from './analysis-work.ts';

type Draft = Omit<TurnAnalysis, 'recommendations'>;
type Rule = (a: Draft) => Recommendation | null;

export const BUFFER_LOSS_RED_FLAG = 5000;
const VOTE_RULE_REASONS = new Set(['vote_no_answers', 'vote_and_answer', 'invalid_vote_id']);

const indexes = <T>(list: T[], keep: (item: T) => boolean, base: string): string[] =>
  list.flatMap((item, i) => (keep(item) ? [`${base}/${i}`] : [])).slice(0, 10);

const RULES: Rule[] = [
  (a) =>
    a.state.value === 'incomplete'
      ? {
          id: 'run-incomplete',
          priority: 'high',
          title: 'The run stopped before it finished',
          detail: `No end-of-run files and no heartbeat for ${a.state.ageSeconds ?? '?'} s (threshold ${a.state.staleAfterSeconds} s): the process was killed or crashed in phase "${a.state.finishReasonDetails ?? 'unknown'}". Check the end of massgen.log, then rerun the turn.`,
          evidence: ['/state'],
        }
      : null,
  (a) =>
    a.state.value === 'in_progress'
      ? {
          id: 'run-in-progress',
          priority: 'low',
          title: 'The turn is still running',
          detail: 'This analysis is a snapshot of a live run; analyze again once status.json reports a finish_reason.',
          evidence: ['/state'],
        }
      : null,
  (a) =>
    ['error', 'timeout'].includes(a.state.value)
      ? {
          id: 'run-failed',
          priority: 'high',
          title: `The run ended with finish_reason "${a.state.value}"`,
          detail: a.state.finishReasonDetails ?? 'See errors below.',
          evidence: ['/state/finishReason'],
        }
      : null,
  (a) =>
    a.state.value === 'completed' && a.winner.agentId === null
      ? {
          id: 'no-winner',
          priority: 'high',
          title: 'Completed without a winner',
          detail: 'No status.json, metrics or coordination file names a winner.',
          evidence: ['/winner'],
        }
      : null,
  (a) =>
    a.errors.maxRetriesInOneRound >= 2
      ? {
          id: 'enforcement-retries',
          priority: 'high',
          title: `An agent needed ${a.errors.maxRetriesInOneRound} enforcement retries in one round`,
          detail:
            'Two or more workflow-enforcement retries within one round is a red flag (log-analyzer skill): tighten the system prompt or the model choice for that agent.',
          evidence: ['/errors/maxRetriesInOneRound', ...indexes(a.errors.enforcement, () => true, '/errors/enforcement')],
        }
      : null,
  (a) =>
    a.errors.bufferCharsLost > BUFFER_LOSS_RED_FLAG
      ? {
          id: 'buffer-loss',
          priority: 'high',
          title: `${a.errors.bufferCharsLost} characters of streamed output were discarded`,
          detail: `More than ${BUFFER_LOSS_RED_FLAG} characters lost to enforcement restarts: work was generated and thrown away.`,
          evidence: ['/errors/bufferCharsLost'],
        }
      : null,
  (a) =>
    a.errors.apiErrors.length > 0
      ? {
          id: 'api-errors',
          priority: 'high',
          title: `${a.errors.apiErrors.length} API error(s)`,
          detail: 'Provider errors (HTTP 5xx, dropped streams) cost retries. Check the provider status and the backend retry settings.',
          evidence: indexes(a.errors.apiErrors, () => true, '/errors/apiErrors'),
        }
      : null,
  (a) =>
    a.errors.timeouts.length > 0
      ? {
          id: 'timeouts',
          priority: 'high',
          title: `${a.errors.timeouts.length} timeout(s)`,
          detail: 'Raise the timeout or reduce the work per round.',
          evidence: indexes(a.errors.timeouts, () => true, '/errors/timeouts'),
        }
      : null,
  (a) =>
    a.errors.exceptions.length > 0 || a.errors.agentErrors.length > 0
      ? {
          id: 'exceptions',
          priority: 'high',
          title: 'Exceptions or agent errors were logged',
          detail: 'See section 7 for the messages.',
          evidence: [
            ...indexes(a.errors.exceptions, () => true, '/errors/exceptions'),
            ...indexes(a.errors.agentErrors, () => true, '/errors/agentErrors'),
          ],
        }
      : null,
  (a) => {
    const hits = a.errors.enforcementByReason.filter((r) => r.reason === 'no_workflow_tool' || r.reason === 'no_tool_calls');
    return hits.length > 0
      ? {
          id: 'workflow-tool-missing',
          priority: 'medium',
          title: 'Agents answered without calling a workflow tool',
          detail: `${hits.map((h) => `${h.reason} x${h.count} (${h.agents.join(', ')})`).join('; ')}. Make new_answer/vote the only way to finish a turn in the prompt, and list the tools that really exist.`,
          evidence: indexes(a.errors.enforcementByReason, (r) => hits.includes(r), '/errors/enforcementByReason'),
        }
      : null;
  },
  (a) => {
    const hits = a.errors.enforcementByReason.filter((r) => VOTE_RULE_REASONS.has(r.reason));
    return hits.length > 0
      ? {
          id: 'vote-rule-violations',
          priority: 'medium',
          title: 'Votes broke the workflow rules',
          detail: `${hits.map((h) => `${h.reason} x${h.count} (${h.agents.join(', ')})`).join('; ')}. Show valid answer labels more prominently in the voting context.`,
          evidence: indexes(a.errors.enforcementByReason, (r) => hits.includes(r), '/errors/enforcementByReason'),
        }
      : null;
  },
  (a) =>
    a.overview.ignoredVotes > 0 && a.overview.ignoredVotes >= a.overview.agents
      ? {
          id: 'ignored-votes',
          priority: 'medium',
          title: `${a.overview.ignoredVotes} vote(s) were discarded by restarts`,
          detail:
            'Agents voted before all answers arrived and had to vote again; waiting for the first answers before voting would save those rounds.',
          evidence: ['/overview/ignoredVotes'],
        }
      : null,
  (a) =>
    a.commands.repeated.some((r) => r.count >= 3)
      ? {
          id: 'repeated-commands',
          priority: 'medium',
          title: 'Commands were run three times or more',
          detail: 'Cache the results or share them between agents.',
          evidence: indexes(a.commands.repeated, (r) => r.count >= 3, '/commands/repeated'),
        }
      : null,
  (a) =>
    a.commands.excessiveOutput.length > 0
      ? {
          id: 'excessive-output',
          priority: 'medium',
          title: `Commands printed ${EXCESSIVE_OUTPUT_CHARS}+ characters`,
          detail: 'Long tool output fills the context; filter it (head, grep, quiet flags).',
          evidence: indexes(a.commands.excessiveOutput, () => true, '/commands/excessiveOutput'),
        }
      : null,
  (a) =>
    a.duplication.repeatedToolCalls.length > 0
      ? {
          id: 'duplicated-tool-calls',
          priority: 'low',
          title: 'Identical tool calls were repeated',
          detail: 'The same tool with the same arguments ran more than once.',
          evidence: indexes(a.duplication.repeatedToolCalls, () => true, '/duplication/repeatedToolCalls'),
        }
      : null,
  (a) =>
    a.duplication.duplicateAnswers.length > 0
      ? {
          id: 'duplicate-answers',
          priority: 'low',
          title: 'Identical answers were submitted',
          detail: 'Some answers are textually identical: those rounds added nothing.',
          evidence: indexes(a.duplication.duplicateAnswers, () => true, '/duplication/duplicateAnswers'),
        }
      : null,
  (a) =>
    a.cost.cacheHitRate !== null && a.cost.cacheHitRate < 0.2 && a.cost.inputTokens > 100_000
      ? {
          id: 'low-cache-hit',
          priority: 'low',
          title: `Prompt cache hit rate is ${(a.cost.cacheHitRate * 100).toFixed(1)}%`,
          detail: 'Stable prompt prefixes would let the provider cache more input tokens.',
          evidence: ['/cost/cacheHitRate', '/cost/inputTokens'],
        }
      : null,
  (a) =>
    a.cost.totalUsd === 0 && a.cost.inputTokens > 0
      ? {
          id: 'unpriced-model',
          priority: 'low',
          title: 'Cost is $0 although tokens were used',
          detail: 'MassGen has no price for the configured model name (e.g. a bare name with a local base_url); real cost is not known.',
          evidence: ['/cost/totalUsd', '/cost/inputTokens'],
        }
      : null,
  (a) =>
    a.warnings.length > 0
      ? {
          id: 'log-problems',
          priority: 'low',
          title: `${a.warnings.length} problem(s) reading the logs`,
          detail: 'Some files were missing, cut off or malformed; figures from them may be incomplete (see the appendix).',
          evidence: indexes(a.warnings, () => true, '/warnings'),
        }
      : null,
];

const ORDER = { high: 0, medium: 1, low: 2 };

export function recommend(draft: Draft): Recommendation[] {
  return RULES.map((rule) => rule(draft))
    .filter((r): r is Recommendation => r !== null)
    .sort((a, b) => ORDER[a.priority] - ORDER[b.priority]);
}
