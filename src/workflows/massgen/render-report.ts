// ANALYSIS_REPORT.md, following the log-analyzer template (spec §4.3), filled only from the analysis.
// Every value that came from a log (ids, the question, error texts, commands) is escaped for the
// place it lands (src/security/markdown-escape.ts): a log cannot add headings, HTML, fences or columns.
import type { Recommendation, TurnAnalysis } from './analysis-model.ts';
import { timelineDiagram, voteGraph } from './render-mermaid.ts';
import { mdCell, mdCode, mdCodeCell, mdText } from '../../security/markdown-escape.ts';

/** Markdown this file wrote itself (bold, code spans of escaped values), put into a cell as is. */
interface Md {
  md: string;
}
type Cell = string | number | boolean | null | undefined | Md;

const md = (text: string): Md => ({ md: text });
const code = (value: string): Md => md(mdCodeCell(value));

function cell(value: Cell): string {
  return typeof value === 'object' && value !== null ? value.md : mdCell(value);
}

function table(head: string[], rows: Cell[][], empty: string): string {
  if (rows.length === 0) return `_${empty}_`;
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join(
    '\n',
  );
}

const usd = (v: number | null): string => (v === null ? 'unknown' : `$${v}`);
const secs = (v: number | null): string => (v === null ? 'unknown' : `${v} s`);
const mermaid = (body: string | null, empty: string): string => (body ? `\`\`\`mermaid\n${body}\n\`\`\`` : `_${empty}_`);

function stateBanner(a: TurnAnalysis): string | null {
  const s = a.state;
  if (s.value === 'in_progress')
    return `> **In progress:** this turn is still running (heartbeat ${s.ageSeconds} s old, threshold ${s.staleAfterSeconds} s). Figures are a snapshot; analyze again when it finishes.`;
  if (s.value === 'incomplete')
    return `> **Incomplete:** the run stopped without its end-of-run files (last heartbeat ${s.ageSeconds} s ago, threshold ${s.staleAfterSeconds} s; ${mdText(s.finishReasonDetails ?? 'phase unknown')}). It was killed or crashed.`;
  if (s.value === 'continued')
    return `> **Continuation:** this turn holds the event stream of a \`--session-id\` continuation (${mdText(s.finishReasonDetails ?? '')}); it is counted once, with that turn.`;
  if (s.value === 'error' || s.value === 'timeout') return `> **Finished with ${s.value}:** ${mdText(s.finishReasonDetails ?? '')}`;
  return null;
}

/**
 * The votes as the dashboard's votes tab counts them: every recorded vote, those that counted (neither
 * replaced by the voter's later vote nor cast for an answer its author later replaced), and the votes
 * restarts ignored, which are separate events and not among the recorded ones.
 */
function voteWords(a: TurnAnalysis): { recorded: string; detail: string } {
  const votes = a.votes;
  const counted = votes.filter((v) => !v.superseded && !v.stale).length;
  const skipped = votes.filter((v) => v.superseded).length;
  const stale = votes.filter((v) => v.stale).length;
  const ignored = a.overview.ignoredVotes;
  const recorded = `${a.overview.votes} recorded vote(s), ${counted} of which counted`;
  const parts = [
    `${counted} counted`,
    ...(skipped > 0 ? [`${skipped} skipped (superseded by the voter's later vote)`] : []),
    ...(stale > 0 ? [`${stale} stale`] : []),
  ];
  const extra =
    ignored > 0 ? `; ${ignored} more vote(s) ignored by restarts (separate vote_ignored events, not among the ${a.overview.votes})` : '';
  return { recorded: `${recorded}${extra}`, detail: `${a.overview.votes} recorded: ${parts.join(', ')}${extra}` };
}

function executiveSummary(a: TurnAnalysis): string {
  const o = a.overview;
  const parts = [
    `Turn ${a.source.turn} of ${mdCode(a.source.session)} is **${a.state.value}**.`,
    `${o.agents} agent(s) produced ${o.answers} answer(s) and ${voteWords(a).recorded}, in ${secs(o.wallClockSeconds)} of wall-clock time.`,
    a.winner.agentId
      ? `Winner: **${mdText(a.winner.agentId)}**${a.winner.finalPresented ? ', who presented the final answer' : ''}.`
      : 'No winner was recorded.',
    `Total cost ${usd(o.totalCostUsd)}; ${a.errors.enforcement.length} enforcement retr(y/ies), ${a.errors.apiErrors.length} API error(s), ${a.recommendations.length} recommendation(s).`,
  ];
  if (a.question) parts.push(`\n\n**Question:** ${mdText(a.question.replace(/\s+/g, ' ').slice(0, 300))}`);
  return parts.join(' ');
}

function overview(a: TurnAnalysis): string {
  const o = a.overview;
  return table(
    ['Metric', 'Value'],
    [
      ['Duration (wall clock)', `${secs(o.wallClockSeconds)} (${o.wallClockSource})`],
      ['Summed round time (parallel agents, not wall clock)', secs(o.summedRoundSeconds)],
      ['Agents', `${o.agents} (${a.agents.map((g) => `${g.id}=${g.label}`).join(', ')})`],
      ['Winner', a.winner.agentId ? `${a.winner.agentId} (${a.winner.source})` : 'none'],
      ['Total Cost', `${usd(o.totalCostUsd)} (${o.costSource})`],
      ['Total Answers', o.answers],
      ['Total Votes', voteWords(a).detail],
      ['Total Restarts', `${o.restarts} agent restart(s), ${o.orchestrationRestarts} orchestration restart(s)`],
      ['Attempts', a.source.attempts.map((t) => `attempt ${t.attempt}: ${t.finishReason ?? 'no finish_reason'}`).join('; ')],
      ['MassGen version', a.source.massgenVersion ?? 'unknown'],
    ],
    'no data',
  );
}

function correctness(a: TurnAnalysis): string {
  const flow = table(
    ['At (s)', 'Attempt', 'Event', 'Agent', 'Details'],
    a.coordinationFlow.slice(0, 60).map((e) => [e.at, e.attempt, e.type, e.agentId, e.text]),
    'no coordination events recorded',
  );
  const more = a.coordinationFlow.length > 60 ? `\n\n_${a.coordinationFlow.length} events in analysis.json; the first 60 are shown._` : '';
  const checklist = a.checklist.map((c) => `- [${c.ok ? 'x' : ' '}] ${mdText(c.item)} (${mdText(c.evidence)})`).join('\n');
  const issues = a.checklist.filter((c) => c.ok !== true).map((c) => `- ${mdText(c.item)}: ${mdText(c.evidence)}`);
  return [
    '### Coordination Flow',
    mermaid(timelineDiagram(a), 'no timestamps for answers or votes'),
    flow + more,
    '### Status checklist',
    checklist,
    '### Issues Found',
    issues.length ? issues.join('\n') : '_None: every checklist item passed._',
  ].join('\n\n');
}

function checklistSection(c: TurnAnalysis['timing']['checklist']): string {
  if (c.rounds.length === 0) return '_Not applicable: no round with a `submit_checklist` call in metrics_events.json._';
  const rows = c.rounds.map((r) => [
    r.agentId,
    r.attempt,
    r.round,
    r.evaluationSeconds,
    r.checklistToProposeSeconds,
    r.implementationSeconds,
    r.postChecklistSeconds,
  ]);
  const split =
    c.evaluationPct === null
      ? ''
      : `\n\nEvaluation ${c.evaluationSeconds} s (${c.evaluationPct}%) against implementation ${c.implementationSeconds} s (${c.implementationPct}%).`;
  return `${table(['Agent', 'Attempt', 'Round', 'Evaluation (s)', 'Checklist→Propose (s)', 'Implementation (s)', 'Post-checklist (s)'], rows, '')}${split}`;
}

function efficiency(a: TurnAnalysis): string {
  const t = a.timing;
  return [
    '### Phase Duration Breakdown',
    table(
      ['Phase', 'Count', 'Avg (s)', 'Max (s)', 'Total (s)', '% of Total'],
      t.phases.map((p) => [p.phase, p.count, p.avgSeconds, p.maxSeconds, p.totalSeconds, p.pctOfTotal]),
      'no round_history in status.json or metrics_summary.json',
    ),
    '### Per-Round Timing (Sorted by Agent)',
    table(
      ['Agent', 'Attempt', 'Round', 'Type', 'Outcome', 'Start (s)', 'End (s)', 'Total (s)', 'Tool (s)', 'Non-tool (s)', 'Tool calls'],
      t.rounds.map((r) => [
        r.agentId,
        r.attempt,
        r.round,
        r.type,
        r.outcome,
        r.startAt,
        r.endAt,
        r.seconds,
        r.toolSeconds,
        r.nonToolSeconds,
        r.toolCalls,
      ]),
      'no round records',
    ),
    '### Evaluation vs Implementation Timing (Checklist-Gated Phases)',
    checklistSection(t.checklist),
    '### Per-Round Evaluation vs Improvement Table',
    '_Tool time (implementation) and non-tool time (evaluation and reasoning) per round are the last columns of the per-round table above._',
    '### API Time',
    t.api
      ? `${t.api.totalCalls} API call(s), ${t.api.totalSeconds} s in total, ${t.api.avgSeconds} s average, ${t.api.avgTtftSeconds} s average time to first token.\n\n${table(
          ['Backend', 'Calls', 'Time (s)'],
          t.api.byBackend.map((b) => [b.name, b.calls, b.seconds]),
          'no per-backend timing',
        )}`
      : '_No api_timing in metrics_summary.json._',
    '### Top Bottlenecks',
    table(
      ['Round', 'Seconds'],
      t.bottlenecks.map((b) => [b.what, b.seconds]),
      'no round timing',
    ),
  ].join('\n\n');
}

function commands(a: TurnAnalysis): string {
  const c = a.commands;
  const source =
    c.total > 0
      ? `${c.total} command(s) from ${mdText(c.sources.join(', '))}.`
      : '_No shell commands recorded (no tool_start with a `command` argument in events.jsonl, execution traces or streaming_debug.log)._';
  return [
    source,
    '### Frequently Repeated Commands',
    table(
      ['Command', 'Count', 'Agents'],
      c.repeated.map((r) => [code(r.command), r.count, r.agents.join(', ')]),
      'no command ran more than once',
    ),
    '### Commands with Excessive Output',
    table(
      ['Command', 'Agent', 'Output chars'],
      c.excessiveOutput.map((r) => [code(r.command), r.agentId, r.outputChars]),
      'no command printed 10000 characters or more',
    ),
    '### Slowest Command Patterns',
    table(
      ['Command', 'Agent', 'Seconds'],
      c.slowest.map((r) => [code(r.command), r.agentId, r.seconds]),
      'no command timings recorded',
    ),
  ].join('\n\n');
}

function duplication(a: TurnAnalysis): string {
  const d = a.duplication;
  const recs = a.recommendations.filter((r) => ['duplicated-tool-calls', 'duplicate-answers', 'repeated-commands'].includes(r.id));
  return [
    '### Duplicated Work Found',
    `${d.repeatedToolCalls.length} repeated tool call pattern(s), ${d.duplicateAnswers.length} group(s) of identical answers.`,
    '### Specific Examples',
    table(
      ['Tool', 'Arguments', 'Count', 'Agents'],
      d.repeatedToolCalls.map((r) => [r.tool, code(r.args), r.count, r.agents.join(', ')]),
      'no identical tool calls',
    ),
    table(
      ['Identical answers', 'Agents', 'Chars'],
      d.duplicateAnswers.map((r) => [r.labels.join(', '), r.agents.join(', '), r.chars]),
      'no identical answers',
    ),
    '### Recommendations',
    recs.length ? recs.map((r) => `- ${mdText(r.title)} (see section 8)`).join('\n') : '_No duplication worth caching._',
  ].join('\n\n');
}

function behaviour(a: TurnAnalysis): string {
  const timeouts = [
    ...a.ignoredVotes.map((v) => [v.at, v.agentId, 'vote ignored', v.details]),
    ...a.errors.timeouts.map((t) => [null, t.agentId, 'timeout', t.message]),
  ];
  return [
    '### Answer Progression',
    table(
      ['Label', 'Agent', 'Attempt', 'At (s)', 'Chars', 'Summary'],
      a.answers.map((x) => [x.label, x.agentId, x.attempt, x.at, x.chars, x.preview]),
      'no answers recorded',
    ),
    '### Voting Analysis',
    table(
      ['Voter', 'Voted For', 'Label', 'At (s)', 'Superseded', 'Stale', 'Reasoning Summary'],
      a.votes.map((v) => [
        v.voterId,
        v.votedFor,
        v.votedForLabel,
        v.at,
        v.superseded ? 'yes (re-voted)' : 'no',
        v.stale ? 'yes' : 'no',
        v.reason.slice(0, 200),
      ]),
      'no votes recorded',
    ),
    mermaid(voteGraph(a), 'no votes to draw'),
    '### Vote vs New Answer Decisions',
    table(
      ['Agent', 'Answers', 'Votes cast', 'Votes received', 'Restarts', 'Rounds', 'Final status'],
      a.agents.map((g) => [g.id, g.answers, g.votesCast, g.votesReceived, g.restarts, g.rounds, g.status]),
      'no agents',
    ),
    '### Agent Collaboration Quality',
    'Vote reasons name agents the way the voter saw them (anonymous numbering), so they are quoted as written. Re-votes are marked superseded; a vote is stale when its target submitted a newer answer afterwards.',
    '### Timeouts/Incomplete Rounds',
    table(['At (s)', 'Agent', 'Kind', 'Details'], timeouts, 'no ignored votes and no timeouts'),
    ...(a.subagents.length
      ? [
          '### Subagents',
          table(
            ['Subagent', 'Dir', 'Finish', 'Winner', 'Cost', 'Answers', 'Votes'],
            a.subagents.map((s) => [s.id, s.dir, s.finishReason, s.winner, s.cost, s.answers, s.votes]),
            '',
          ),
        ]
      : []),
  ].join('\n\n');
}

function cost(a: TurnAnalysis): string {
  const c = a.cost;
  return [
    '### Cost Breakdown',
    table(
      ['Agent', 'Model', 'Input Tokens', 'Output Tokens', 'Reasoning', 'Cached input', 'Cost'],
      [
        ...a.agents.map((g) => [g.id, g.model, g.inputTokens, g.outputTokens, g.reasoningTokens, g.cachedInputTokens, usd(g.costUsd)]),
        [md('**Total**'), '', c.inputTokens, c.outputTokens, c.reasoningTokens, c.cachedInputTokens, usd(c.totalUsd)],
      ],
      'no token usage',
    ),
    `Cost source: ${mdText(c.source)}.${c.subagentUsd !== null ? ` Subagent cost: ${usd(c.subagentUsd)}.` : ''}`,
    '### Cache Efficiency',
    c.cacheHitRate === null
      ? '_No input tokens recorded._'
      : `Cache hit rate (cached input / input tokens): ${c.cacheHitRate} (${c.cachedInputTokens} of ${c.inputTokens}).`,
    '### Tool Cost Impact',
    table(
      ['Tool', 'Calls', 'Failures', 'Denied', 'Total (s)', 'Avg (s)', 'Output chars'],
      a.tools.map((t) => [t.name, t.calls, t.failures, t.denied ?? 0, t.totalSeconds, t.avgSeconds, t.outputChars]),
      'no tool executions recorded',
    ),
  ].join('\n\n');
}

/** Denied calls per agent and tool (a permission hook blocked them; they never ran), with the reasons given. */
function deniedTable(calls: TurnAnalysis['errors']['deniedToolCalls']): string {
  const groups = new Map<string, { agentId: string | null; tool: string; count: number; reasons: Set<string> }>();
  for (const c of calls) {
    const key = `${c.agentId ?? ''}\u0000${c.tool}`;
    const g = groups.get(key) ?? { agentId: c.agentId, tool: c.tool, count: 0, reasons: new Set<string>() };
    g.count += 1;
    if (c.reason) g.reasons.add(c.reason);
    groups.set(key, g);
  }
  return table(
    ['Agent', 'Tool', 'Denied', 'Reason'],
    [...groups.values()].map((g) => [g.agentId, g.tool, g.count, [...g.reasons].slice(0, 3).join(' / ')]),
    'no denied tool calls',
  );
}

function errors(a: TurnAnalysis): string {
  const e = a.errors;
  return [
    '### Exceptions',
    table(
      ['Source', 'Line', 'Message'],
      e.exceptions.map((x) => [x.source, x.line, x.message]),
      'no exceptions or tracebacks in massgen.log',
    ),
    '### Failed Tool Calls',
    table(
      ['Tool', 'Agent', 'Source', 'Message'],
      e.failedToolCalls.map((x) => [x.tool, x.agentId, x.source, x.message]),
      'no failed tool calls',
    ),
    '### Denied Tool Calls',
    deniedTable(e.deniedToolCalls ?? []),
    '### MCP Errors',
    table(
      ['Line', 'Level', 'Message'],
      (e.mcpErrors ?? []).map((x) => [x.line, x.level, x.message]),
      'no MCP errors in massgen.log',
    ),
    '### Agent Errors',
    table(
      ['Agent', 'Type', 'Source', 'Message'],
      e.agentErrors.map((x) => [x.agentId, x.type, x.source, x.message]),
      'no agent errors',
    ),
    table(
      ['Agent', 'Time', 'Source', 'API error'],
      e.apiErrors.map((x) => [x.agentId, x.time, x.source, x.message]),
      'no API errors',
    ),
    `massgen.log: ${e.logErrorLines} ERROR/CRITICAL line(s), ${e.logWarningLines} WARNING line(s), ${(e.mcpErrors ?? []).length} MCP error line(s).`,
    '### Timeouts',
    table(
      ['Agent', 'Source', 'Message'],
      e.timeouts.map((x) => [x.agentId, x.source, x.message]),
      'no timeouts',
    ),
    '### Enforcement & Workflow Reliability',
    table(
      ['Reason code', 'Count', 'Agents'],
      e.enforcementByReason.map((r) => [code(r.reason), r.count, r.agents.join(', ')]),
      'no enforcement retries (reliability is null for every agent)',
    ),
    table(
      ['Agent', 'Attempt', 'Round', 'Retry', 'Reason', 'Tool calls', 'Buffer chars lost', 'Message'],
      e.enforcement.map((r) => [r.agentId, r.attempt, r.round, r.retry, r.reason, r.toolCalls.join(', '), r.bufferChars, r.message]),
      'no enforcement attempts',
    ),
    `Buffer characters lost: ${e.bufferCharsLost}. Most retries in one round by one agent: ${e.maxRetriesInOneRound}.`,
  ].join('\n\n');
}

function recommendationList(list: Recommendation[]): string {
  if (list.length === 0) return '_None._';
  return list
    .map((r) => `- **${mdText(r.title)}** (${mdCode(r.id)}): ${mdText(r.detail)} Evidence: ${r.evidence.map(mdCode).join(', ')}`)
    .join('\n');
}

function recommendations(a: TurnAnalysis): string {
  const by = (p: Recommendation['priority']) => a.recommendations.filter((r) => r.priority === p);
  return [
    '### High Priority',
    recommendationList(by('high')),
    '### Medium Priority',
    recommendationList(by('medium')),
    '### Low Priority / Future Improvements',
    recommendationList(by('low')),
  ].join('\n\n');
}

function linearIssues(a: TurnAnalysis): string {
  const rows = a.recommendations.filter((r) => r.priority !== 'low').map((r) => [r.priority, r.title, r.detail, 'log-analysis']);
  return `${table(['Priority', 'Title', 'Description', 'Labels'], rows, 'no issues to suggest')}\n\n_Create issues only after user approval._`;
}

function appendix(a: TurnAnalysis): string {
  const c = a.config;
  const config = table(
    ['Key', 'Value'],
    [
      ['config_path', c.configPath],
      ['massgen_version', c.massgenVersion],
      ['python_version', c.pythonVersion],
      ['git', c.gitBranch ? `${c.gitBranch} ${c.gitCommit ?? ''}` : null],
      ...c.agents.map((g) => [`agent ${g.id}`, `${g.backend ?? '?'} / ${g.model ?? '?'}`]),
      ...Object.entries(c.orchestrator).map(([k, v]) => [k, v]),
    ],
    'no execution_metadata.yaml',
  );
  return [
    '### Configuration Used',
    config,
    '### Files Generated',
    table(
      ['File', 'Bytes'],
      a.files.map((f) => [f.path, f.bytes]),
      'no files',
    ),
    '### Warnings',
    table(
      ['File', 'Code', 'Message'],
      a.warnings.map((w) => [w.file, w.code, w.message]),
      'no problems reading the logs',
    ),
    '### Run State Rule',
    `${mdText(a.state.rule)}. Heartbeat source: ${mdText(a.state.heartbeatSource)}${a.state.lastActivity ? ` (${mdText(a.state.lastActivity)})` : ''}.`,
  ].join('\n\n');
}

export function renderReport(a: TurnAnalysis): string {
  const turn = a.source.turnDir ?? '(legacy flat log)';
  const banner = stateBanner(a);
  const sections = [
    '# MassGen Log Analysis Report',
    `**Session:** ${mdText(a.source.session)} ${mdText(turn)} **Trace ID:** n/a (local logs) **Generated:** ${a.analyzedAt} by refinery analyze-turn **Logfire Link:** n/a`,
    ...(banner ? [banner] : []),
    '## Executive Summary',
    executiveSummary(a),
    '## Session Overview',
    overview(a),
    '## 1. Correctness Analysis',
    correctness(a),
    '## 2. Efficiency Analysis',
    efficiency(a),
    '## 3. Command Pattern Analysis',
    commands(a),
    '## 4. Work Duplication Analysis',
    duplication(a),
    '## 5. Agent Behavior Analysis',
    behaviour(a),
    '## 6. Cost & Token Analysis',
    cost(a),
    '## 7. Errors & Issues',
    errors(a),
    '## 8. Recommendations',
    recommendations(a),
    '## 9. Suggested Linear Issues',
    linearIssues(a),
    '## Appendix',
    appendix(a),
  ];
  return `${sections.join('\n\n')}\n`;
}
