// Data model of what the parsers read from a MassGen log tree. Types only.
// Every field a MassGen version may omit is optional or nullable: parsers key on presence, not version.

/** A problem found while reading logs: never thrown, always carried into the analysis. */
export interface LogWarning {
  /** Path relative to the turn directory (or the log root for legacy flat logs). */
  file: string;
  /** Short machine code, e.g. `truncated`, `invalid-json`, `wrong-type`, `missing`. */
  code: string;
  message: string;
}

export type WarningSink = (file: string, code: string, message: string) => void;

/** One directory that holds the files of one orchestration run (an attempt). */
export interface RunDir {
  /** Absolute path. */
  dir: string;
  /** Attempt number; 1 when the layout has no attempt_M level. */
  attempt: number;
  /** Nested runs found under subagents/<id>/full_logs (never searched further for sessions). */
  subagents: { id: string; dir: string }[];
}

export type LayoutKind = 'turn-attempt' | 'turn' | 'attempt' | 'flat';

/** The unit the pipeline runs one stage for: one turn (every attempt) or one legacy flat log. */
export interface TurnUnit {
  /** Absolute path of the session root (`log_*`). */
  logDir: string;
  /** Absolute path of `turn_N/`, or null for legacy flat logs (the report then goes in logDir). */
  turnDir: string | null;
  /** Turn number (1 for legacy flat logs). */
  turn: number;
  layout: LayoutKind;
  /** Attempts sorted numerically. */
  attempts: RunDir[];
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  cachedInputTokens: number;
  estimatedCost: number;
}

export interface RoundRecord {
  agentId: string;
  roundNumber: number;
  roundType: string;
  outcome: string;
  startTime: number | null;
  endTime: number | null;
  durationMs: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
}

export interface EnforcementAttempt {
  agentId: string;
  round: number | null;
  attempt: number | null;
  reason: string;
  toolCalls: string[];
  errorMessage: string | null;
  bufferChars: number;
  timestamp: number | null;
}

export interface ToolStat {
  name: string;
  calls: number;
  failures: number;
  totalMs: number;
  outputChars: number;
}

export interface AgentStatus {
  id: string;
  status: string | null;
  answerCount: number | null;
  latestAnswerLabel: string | null;
  timesRestarted: number | null;
  lastActivity: number | null;
  error: { type: string; message: string; timestamp: number | null } | null;
  tokenUsage: TokenUsage | null;
  rounds: RoundRecord[];
  enforcement: EnforcementAttempt[];
  /** reliability.total_buffer_chars_lost as written (may disagree with the sum of attempts). */
  bufferCharsLost: number;
  tools: ToolStat[];
}

export interface StatusFile {
  finishReason: string | null;
  finishReasonDetails: string | null;
  isComplete: boolean | null;
  lastUpdated: number | null;
  question: string | null;
  startTime: number | null;
  elapsedSeconds: number | null;
  phase: string | null;
  totalCost: number | null;
  agents: AgentStatus[];
  votes: Record<string, number>;
  winner: string | null;
}

export interface ApiTiming {
  totalCalls: number;
  totalTimeMs: number;
  avgTimeMs: number;
  avgTtftMs: number;
  byBackend: { name: string; calls: number; timeMs: number }[];
}

export interface MetricsSummary {
  question: string | null;
  winner: string | null;
  numAgents: number | null;
  totalCost: number | null;
  subagentCost: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  tools: ToolStat[];
  apiTiming: ApiTiming | null;
  agents: { id: string; tokenUsage: TokenUsage | null; rounds: RoundRecord[] }[];
}

export interface ToolExecution {
  toolName: string;
  agentId: string | null;
  startTime: number | null;
  executionMs: number;
  success: boolean;
  errorMessage: string | null;
  outputChars: number;
}

export interface MetricsEvents {
  toolExecutions: ToolExecution[];
}

export interface CoordinationEvent {
  timestamp: number | null;
  type: string;
  agentId: string | null;
  details: string;
  context: Record<string, unknown>;
}

export interface CoordinationEvents {
  userPrompt: string | null;
  agentIds: string[];
  startTime: number | null;
  endTime: number | null;
  finalWinner: string | null;
  events: CoordinationEvent[];
}

export interface SnapshotMapping {
  label: string;
  type: string;
  agentId: string;
  timestamp: string | null;
  votedFor: string | null;
  votedForLabel: string | null;
  iteration: number | null;
  round: number | null;
  path: string | null;
}

export interface VoteFile {
  voterId: string;
  votedFor: string;
  votedForLabel: string | null;
  reason: string;
  unixTimestamp: number | null;
  iteration: number | null;
  coordinationRound: number | null;
  availableOptions: string[];
}

export interface TraceToolCall {
  tool: string;
  /** The `command` argument when the call has one (execute_command and friends). */
  command: string | null;
  /** Canonical JSON of the arguments, capped, for duplicate detection. */
  argsKey: string;
  resultChars: number | null;
  isError: boolean;
}

export interface ExecutionTrace {
  agentId: string | null;
  model: string | null;
  started: string | null;
  toolCalls: TraceToolCall[];
  reasoningChars: number;
  votesCast: number;
}

export interface Snapshot {
  agentId: string;
  /** Directory name `YYYYMMDD_HHMMSS_ffffff`. */
  timestamp: string;
  /** Path relative to the run dir. */
  relDir: string;
  kind: 'answer' | 'vote' | 'other';
  answer: { chars: number; preview: string; hash: string } | null;
  vote: VoteFile | null;
  contextChars: number | null;
  trace: ExecutionTrace | null;
}

export interface CommandRecord {
  agentId: string | null;
  command: string;
  source: 'events.jsonl' | 'execution_trace.md' | 'streaming_debug.log';
  seconds: number | null;
  outputChars: number | null;
  isError: boolean;
}

export interface EventsSummary {
  lines: number;
  malformedLines: number;
  byType: Record<string, number>;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
  answers: { agentId: string | null; label: string | null; timestamp: string | null; content: string }[];
  votes: { agentId: string | null; targetId: string | null; reason: string; timestamp: string | null }[];
  restarts: { agentId: string | null; timestamp: string | null; reason: string | null }[];
  /** `🔄 Vote for [x] ignored` text events: votes overtaken by a restart. */
  ignoredVotes: { agentId: string | null; timestamp: string | null }[];
  errors: { agentId: string | null; timestamp: string | null; message: string; source: 'error-event' | 'text' }[];
  timeouts: { timestamp: string | null; reason: string }[];
  commands: CommandRecord[];
  tools: {
    name: string;
    agentId: string | null;
    seconds: number | null;
    outputChars: number;
    isError: boolean;
    argsKey: string;
    /** `tool_complete` with status "denied" (MassGen 0.1.97+: a permission hook blocked the call; it never ran). */
    denied: boolean;
    /** The `result` text of a failed or denied call (capped), else null. */
    reason: string | null;
  }[];
  roundStarts: { agentId: string | null; round: number; timestamp: string | null }[];
  finalAnswerAt: string | null;
  postEvaluations: number;
  /** Records beyond the per-list cap that were counted but not kept. */
  droppedRecords: number;
}

export interface TextLogSummary {
  lines: number;
  byLevel: Record<string, number>;
  errors: { line: number; time: string | null; message: string }[];
  exceptions: { line: number; message: string }[];
  timeouts: { line: number; message: string }[];
  commands: CommandRecord[];
  /** `Created session … : S` / `Using session from CLI: S` lines (session-marker.ts). */
  sessionMarkers: { line: number; id: string; role: 'created' | 'continued' }[];
  /** MCP errors at any level but DEBUG (MassGen logs most of them at INFO). */
  mcpErrors: { line: number; level: string; message: string }[];
}

export interface ExecutionMetadata {
  query: string | null;
  timestamp: string | null;
  configPath: string | null;
  massgenVersion: string | null;
  pythonVersion: string | null;
  agents: { id: string; backend: string | null; model: string | null }[];
  orchestrator: Record<string, string | number | boolean | null>;
  gitBranch: string | null;
  gitCommit: string | null;
  /** cli_args.session_id (a --session-id run, or every interactive turn). */
  cliSessionId: string | null;
  /** cli_args.mode (interactive, coordination_restart, …); null for the automation vars(args) dump. */
  cliMode: string | null;
  /** config.session_id: a session named in the YAML config. */
  configSessionId: string | null;
}

export interface CoordinationTableSummary {
  answers: number | null;
  votes: number | null;
  restarts: number | null;
}

export interface FileInfo {
  /** Path relative to the turn dir (or the legacy log root). */
  path: string;
  bytes: number;
  mtimeMs: number;
}

/** Everything read from one run directory. */
export interface RunData {
  attempt: number;
  dir: string;
  /** Path of the run dir relative to the turn dir ('' when it is the turn dir itself). */
  relDir: string;
  files: FileInfo[];
  newestMtimeMs: number | null;
  status: StatusFile | null;
  metrics: MetricsSummary | null;
  metricsEvents: MetricsEvents | null;
  coordination: CoordinationEvents | null;
  mappings: SnapshotMapping[] | null;
  snapshots: Snapshot[];
  /** Agent dirs found by their snapshot children, sorted. */
  agentDirs: string[];
  finalAgents: string[];
  table: CoordinationTableSummary | null;
  events: EventsSummary | null;
  massgenLog: TextLogSummary | null;
  streamingLog: TextLogSummary | null;
  metadata: ExecutionMetadata | null;
  subagents: SubagentData[];
}

export interface SubagentData {
  id: string;
  dir: string;
  finishReason: string | null;
  winner: string | null;
  cost: number | null;
  answers: number;
  votes: number;
}
