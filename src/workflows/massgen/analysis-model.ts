// The turn analysis (schemas/turn-analysis.schema.json). Types only; the schema is the contract.
import type { LayoutKind, LogWarning, SubagentData } from './model.ts';

export type RunState =
  | 'completed'
  | 'in_progress'
  | 'incomplete'
  | 'error'
  | 'timeout'
  | 'waiting_for_review'
  /** The orphan turn of a `--session-id` continuation: its event stream; the run's other files are in the next turn. */
  | 'continued'
  | 'unknown';

/** A point in time: `time` as the source wrote it, `at` = seconds since the turn started (null if unknown). */
export interface When {
  time: string | null;
  at: number | null;
}

export interface AttemptInfo {
  attempt: number;
  dir: string;
  finishReason: string | null;
  files: number;
  bytes: number;
  endOfRunFiles: boolean;
}

export interface StateInfo {
  value: RunState;
  finishReason: string | null;
  finishReasonDetails: string | null;
  isComplete: boolean | null;
  heartbeatSource: 'status.meta.last_updated' | 'newest-file-mtime' | 'none';
  lastActivity: string | null;
  ageSeconds: number | null;
  staleAfterSeconds: number;
  rule: string;
}

export interface Overview {
  wallClockSeconds: number | null;
  wallClockSource: string;
  summedRoundSeconds: number | null;
  agents: number;
  answers: number;
  votes: number;
  finalVotes: number;
  ignoredVotes: number;
  restarts: number;
  orchestrationRestarts: number;
  totalCostUsd: number | null;
  costSource: string;
}

export interface AgentAnalysis {
  id: string;
  label: string;
  backend: string | null;
  model: string | null;
  status: string | null;
  answers: number;
  votesCast: number;
  votesReceived: number;
  restarts: number;
  rounds: number;
  enforcementRetries: number;
  bufferCharsLost: number;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedInputTokens: number;
  costUsd: number | null;
}

export interface AnswerRecord extends When {
  label: string;
  agentId: string;
  attempt: number;
  chars: number | null;
  preview: string | null;
  source: string;
}

export interface VoteRecord extends When {
  voterId: string;
  votedFor: string;
  votedForLabel: string | null;
  reason: string;
  attempt: number;
  /** The voter cast a later vote in the same attempt. */
  superseded: boolean;
  /** The voted-for agent submitted a newer answer after this vote's label. */
  stale: boolean;
  source: string;
}

export interface IgnoredVote extends When {
  agentId: string | null;
  attempt: number;
  details: string;
}

export interface FlowEvent extends When {
  attempt: number;
  type: string;
  agentId: string | null;
  text: string;
}

export interface ChecklistItem {
  item: string;
  ok: boolean | null;
  evidence: string;
}

export interface PhaseRow {
  phase: string;
  count: number;
  avgSeconds: number;
  maxSeconds: number;
  totalSeconds: number;
  pctOfTotal: number;
}

/** One checklist round: seconds in each checklist-gated phase (null where the phase did not happen). */
export interface ChecklistRoundRow {
  agentId: string;
  attempt: number;
  round: number;
  evaluationSeconds: number;
  checklistToProposeSeconds: number | null;
  implementationSeconds: number | null;
  postChecklistSeconds: number | null;
}

export interface ChecklistPhases {
  rounds: ChecklistRoundRow[];
  evaluationSeconds: number;
  implementationSeconds: number;
  /** Of evaluation + implementation; null without checklist rounds. */
  evaluationPct: number | null;
  implementationPct: number | null;
}

export interface RoundRow {
  agentId: string;
  attempt: number;
  round: number;
  type: string;
  outcome: string;
  startAt: number | null;
  endAt: number | null;
  seconds: number;
  toolSeconds: number;
  nonToolSeconds: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface ApiSummary {
  totalCalls: number;
  totalSeconds: number;
  avgSeconds: number;
  avgTtftSeconds: number;
  byBackend: { name: string; calls: number; seconds: number }[];
}

export interface ToolRow {
  name: string;
  /** Every call, denied ones included. */
  calls: number;
  /** Calls that ran and failed. */
  failures: number;
  /** Calls a permission hook denied (MassGen 0.1.97+): never ran, not in the time. */
  denied: number;
  totalSeconds: number;
  avgSeconds: number;
  outputChars: number;
}

export interface CommandStats {
  total: number;
  sources: string[];
  repeated: { command: string; count: number; agents: string[] }[];
  excessiveOutput: { command: string; agentId: string | null; outputChars: number }[];
  slowest: { command: string; agentId: string | null; seconds: number }[];
}

export interface Duplication {
  repeatedToolCalls: { tool: string; args: string; count: number; agents: string[] }[];
  duplicateAnswers: { labels: string[]; agents: string[]; chars: number | null }[];
}

export interface CostSummary {
  totalUsd: number | null;
  agentUsd: number | null;
  subagentUsd: number | null;
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedInputTokens: number;
  cacheHitRate: number | null;
  source: string;
}

export interface EnforcementRow {
  agentId: string;
  attempt: number;
  round: number | null;
  retry: number | null;
  reason: string;
  toolCalls: string[];
  bufferChars: number;
  message: string | null;
}

export interface ErrorSummary {
  enforcement: EnforcementRow[];
  enforcementByReason: { reason: string; count: number; agents: string[] }[];
  /** Max retries any agent needed within one round. */
  maxRetriesInOneRound: number;
  bufferCharsLost: number;
  apiErrors: { agentId: string | null; time: string | null; message: string; source: string }[];
  agentErrors: { agentId: string; type: string; message: string; source: string }[];
  timeouts: { agentId: string | null; message: string; source: string }[];
  exceptions: { source: string; line: number | null; message: string }[];
  failedToolCalls: { tool: string; agentId: string | null; message: string; source: string }[];
  /** Calls a permission hook denied, with the reason MassGen gave (its `result` text). */
  deniedToolCalls: { tool: string; agentId: string | null; reason: string; source: string }[];
  /** MCP errors massgen.log records at INFO/WARNING level ("MCP unexpected error", …), which no other file carries. */
  mcpErrors: { line: number; level: string; message: string }[];
  logErrorLines: number;
  logWarningLines: number;
}

export interface Recommendation {
  id: string;
  priority: 'high' | 'medium' | 'low';
  title: string;
  detail: string;
  /** JSON pointers into this analysis that triggered the rule. */
  evidence: string[];
}

export interface ConfigSummary {
  configPath: string | null;
  massgenVersion: string | null;
  pythonVersion: string | null;
  gitBranch: string | null;
  gitCommit: string | null;
  agents: { id: string; backend: string | null; model: string | null }[];
  orchestrator: Record<string, string | number | boolean | null>;
}

export interface TurnAnalysis {
  schemaVersion: 1;
  kind: 'massgen-turn-analysis';
  analyzedAt: string;
  source: {
    session: string;
    turn: number;
    turnDir: string | null;
    layout: LayoutKind;
    massgenVersion: string | null;
    /** The MassGen session (`--session-id`) the turn's files name, if any (session-marker.ts). */
    massgenSession: { id: string; role: 'created' | 'continued' | 'member'; evidence: string } | null;
    attempts: AttemptInfo[];
  };
  state: StateInfo;
  question: string | null;
  winner: { agentId: string | null; source: string; finalPresented: boolean };
  overview: Overview;
  agents: AgentAnalysis[];
  answers: AnswerRecord[];
  votes: VoteRecord[];
  ignoredVotes: IgnoredVote[];
  coordinationFlow: FlowEvent[];
  checklist: ChecklistItem[];
  timing: {
    phases: PhaseRow[];
    rounds: RoundRow[];
    checklist: ChecklistPhases;
    api: ApiSummary | null;
    bottlenecks: { what: string; seconds: number }[];
  };
  tools: ToolRow[];
  commands: CommandStats;
  duplication: Duplication;
  cost: CostSummary;
  errors: ErrorSummary;
  subagents: SubagentData[];
  recommendations: Recommendation[];
  config: ConfigSummary;
  files: { path: string; bytes: number }[];
  warnings: LogWarning[];
}
