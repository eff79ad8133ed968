// The summary of every run under a logs folder (schemas/runs-summary.schema.json). Types only.
// Every figure is a sum or count over the turns' analysis.json files (via TurnDigest).

export type GroupBy = 'model' | 'agent' | 'config';
export const GROUP_BYS: readonly GroupBy[] = ['model', 'agent', 'config'];

/** What the summary keeps of one turn's analysis.json. */
export interface TurnDigest {
  session: string;
  turn: number;
  turnDir: string | null;
  /** How many attempt folders the analysis read. */
  attempts: number;
  /** YYYY-MM-DD (MassGen's local time) of the turn's first event, else of the session folder's name. */
  date: string | null;
  state: string;
  question: string | null;
  wallClockSeconds: number | null;
  /** overview.totalCostUsd in micro-dollars (integers add up exactly). */
  costMicros: number | null;
  answers: number;
  votes: number;
  /** Votes a later vote of the same voter replaced. */
  reVotes: number;
  restarts: number;
  orchestrationRestarts: number;
  bufferCharsLost: number;
  winner: string | null;
  /** Whether every agent's last vote named the same agent; null without votes. */
  unanimous: boolean | null;
  config: string | null;
  massgenSession: { id: string; role: 'created' | 'continued' | 'member'; evidence: string } | null;
  agents: {
    id: string;
    model: string | null;
    backend: string | null;
    answers: number;
    votesCast: number;
    restarts: number;
    bufferCharsLost: number;
    costMicros: number | null;
  }[];
  /** Enforcement retries: [reason, agentId, count]. */
  enforcement: [string, string, number][];
  /** API errors: [agentId or null, count]. */
  apiErrors: [string | null, number][];
  /** Tool calls a permission hook denied: [agentId or null, tool, count]. */
  deniedTools: [string | null, string, number][];
}

export interface RunRef {
  session: string;
  turn: number;
  date: string | null;
  state: string;
  costUsd: number | null;
  wallClockSeconds: number | null;
  question: string | null;
  /** ANALYSIS_REPORT.md relative to the summary's folder ('/'-separated). */
  report: string;
}

export interface RunRow extends RunRef {
  winner: string | null;
  answers: number;
  votes: number;
  enforcementRetries: number;
  massgenSession: string | null;
  /** The log folder (log_*) this run's folder continues (massgen --session-id), or null. */
  continues: string | null;
}

export interface GroupRow {
  key: string;
  turns: number;
  agentRuns: number;
  answers: number;
  votesCast: number;
  wins: number;
  restarts: number;
  enforcementRetries: number;
  bufferCharsLost: number;
  apiErrors: number;
  costUsd: number | null;
}

export interface SessionStory {
  /** The MassGen session id (session_YYYYMMDD_HHMMSS). */
  id: string;
  /** The log folder that created it (or the first that names it). */
  startedIn: string;
  turns: { session: string; turn: number; role: string; state: string; report: string }[];
  /** Log folders that continue it: `{ folder, continues }`. */
  links: { folder: string; continues: string; evidence: string }[];
}

export interface RunsSummary {
  schemaVersion: 1;
  kind: 'massgen-runs-summary';
  generatedAt: string;
  logs: string;
  filter: { since: string | null; groupBy: GroupBy };
  totals: {
    sessions: number;
    turns: number;
    agentRuns: number;
    answers: number;
    votes: number;
    reVotes: number;
    restarts: number;
    orchestrationRestarts: number;
    enforcementRetries: number;
    bufferCharsLost: number;
    apiErrors: number;
    /** Tool calls a permission hook denied (MassGen 0.1.97+); they never ran. */
    deniedToolCalls: number;
    costUsd: number;
    agentCostUsd: number;
    wallClockSeconds: number;
    turnsWithCost: number;
    turnsWithDuration: number;
    turnsWithWinner: number;
    votedTurns: number;
    unanimousTurns: number;
    /** unanimousTurns / votedTurns, null without voted turns. */
    unanimousRate: number | null;
  };
  states: { state: string; turns: number }[];
  perDay: { date: string; sessions: number; turns: number; agentRuns: number; costUsd: number }[];
  duration: {
    buckets: { label: string; fromSeconds: number; toSeconds: number | null; turns: number }[];
    unknown: number;
    p50Seconds: number | null;
    p90Seconds: number | null;
    maxSeconds: number | null;
  };
  costliest: RunRef[];
  slowest: RunRef[];
  enforcement: {
    byReason: { reason: string; retries: number }[];
    byModel: { model: string; backend: string; retries: number }[];
  };
  apiErrors: { byBackend: { backend: string; errors: number }[] };
  deniedToolCalls: { byAgentTool: { agent: string; tool: string; denied: number }[] };
  bufferCharsLost: { byModel: { model: string; chars: number }[] };
  winners: { byAgent: { agent: string; wins: number }[]; byModel: { model: string; wins: number }[] };
  perRun: {
    reVotes: { total: number; mean: number; max: number };
    restarts: { total: number; mean: number; max: number };
  };
  answersByAgent: { agent: string; answers: number; turns: number }[];
  groups: { by: GroupBy; rows: GroupRow[] };
  sessions: SessionStory[];
  runs: RunRow[];
}
