// Data model of the synthetic MassGen logs: scenario scripts (input) and the simulated
// records (output of simulate.ts) that every renderer reads. Types only.
import type { Micros } from './clock.ts';
import type { PyValue } from './py-json.ts';

export type ReasonCode = 'no_workflow_tool' | 'no_tool_calls' | 'invalid_vote_id' | 'vote_no_answers' | 'vote_and_answer' | 'api_error';

/** One scripted action, in global order. The simulator derives everything else. */
export type Step =
  | { kind: 'answer'; agent: string }
  | { kind: 'vote'; agent: string; target: string }
  /** A vote overtaken by a restart: needs the agent's context to be stale. */
  | { kind: 'vote-ignored'; agent: string; target: string }
  /** A workflow-enforcement retry in the agent's current round. */
  | { kind: 'enforce'; agent: string; reason: ReasonCode }
  /** Winner selection and final presentation (every agent must have voted). */
  | { kind: 'present' }
  /** Post-evaluation asks for an orchestration restart (a new attempt follows). */
  | { kind: 'restart-orchestration'; reason: string }
  /** SIGKILL: nothing after this is written; end-of-run files are missing. */
  | { kind: 'kill' };

export interface TurnScript {
  question: string;
  attempts: Step[][];
}

export interface ScenarioScript {
  name: string;
  summary: string;
  /** agent ids in config order (labels use sorted order) */
  agents: string[];
  model: string;
  mode: 'automation' | 'interactive';
  turns: TurnScript[];
}

export interface TokenDelta {
  input: number;
  output: number;
  reasoning: number;
  cached: number;
  /** micro-dollars */
  costMicros: number;
}

export interface RoundRecord {
  agent: string;
  roundNumber: number;
  roundType: 'initial_answer' | 'voting' | 'presentation';
  outcome: 'answer' | 'vote' | 'presentation';
  tokens: TokenDelta;
  start: Micros;
  end: Micros;
}

export interface AnswerRecord {
  agent: string;
  label: string;
  /** 1-based per-agent answer number */
  number: number;
  /** the agent's coordination round when it answered */
  round: number;
  iteration: number;
  at: Micros;
  stamp: string;
  text: string;
  /** labels the agent saw when it produced the answer */
  seen: string[];
  /** context.txt content of the snapshot */
  context: PyValue;
  trace: string;
}

export interface VoteRecord {
  agent: string;
  /** agentN.voteK */
  label: string;
  target: string;
  targetLabel: string;
  reason: string;
  round: number;
  /** tracker max round (vote.json coordination_round) */
  trackerRound: number;
  iteration: number;
  at: Micros;
  stamp: string;
  seen: string[];
  context: PyValue;
  trace: string;
}

export interface IgnoredVote {
  agent: string;
  target: string;
  at: Micros;
  iteration: number;
  round: number;
}

export interface EnforcementRecord {
  agent: string;
  round: number;
  attempt: number;
  reason: ReasonCode;
  toolCalls: string[];
  errorMessage: string;
  bufferPreview: string | null;
  bufferChars: number;
  at: Micros;
}

export interface ApiCall {
  agent: string;
  round: number;
  /** centi-milliseconds, so sums stay exact */
  timeCms: number;
  ttftCms: number;
}

export interface CoordEvent {
  at: Micros;
  type: string;
  agent: string | null;
  details: string;
  context: Record<string, PyValue>;
}

export interface JsonlEvent {
  at: Micros;
  type: string;
  agent: string | null;
  round: number;
  data: Record<string, PyValue>;
  /** padding may be inserted after this line (a streamed text/thinking fragment) */
  padKind?: 'text' | 'thinking';
}

export interface AgentFinalState {
  status: 'waiting' | 'streaming' | 'answered' | 'voted';
  answerCount: number;
  latestLabel: string | null;
  firstVote: VoteRecord | null;
  round: number;
  lastActivity: Micros;
  roundStart: Micros;
}

export interface FinalRecord {
  winner: string;
  label: string;
  text: string;
  at: Micros;
  iteration: number;
  round: number;
  /** current (latest) vote per voter, counted per agent id */
  voteCounts: Record<string, number>;
  voteSummary: string;
  context: PyValue;
  trace: string;
}

export interface AttemptRecord {
  scenario: string;
  logName: string;
  turn: number;
  attempt: number;
  question: string;
  agents: string[];
  sortedAgents: string[];
  model: string;
  mode: 'automation' | 'interactive';
  start: Micros;
  end: Micros;
  /** last status.json rewrite */
  statusAt: Micros;
  answers: AnswerRecord[];
  votes: VoteRecord[];
  ignored: IgnoredVote[];
  enforcement: EnforcementRecord[];
  rounds: RoundRecord[];
  /** tokens billed per agent (rounds plus interrupted calls) */
  usage: Record<string, TokenDelta>;
  apiCalls: ApiCall[];
  final: FinalRecord | null;
  outcome: 'completed' | 'restarted' | 'killed';
  restartReason: string | null;
  agentState: Record<string, AgentFinalState>;
  coordEvents: CoordEvent[];
  jsonl: JsonlEvent[];
  logLines: string[];
  outputs: Record<string, string>;
  activeAgent: string | null;
  /** records of earlier turns that MassGen repeats in interactive turn_N metrics */
  carried: { rounds: RoundRecord[]; usage: Record<string, TokenDelta>; apiCalls: ApiCall[] } | null;
}

export interface LogDirRecord {
  scenario: string;
  summary: string;
  logName: string;
  mode: 'automation' | 'interactive';
  agents: string[];
  model: string;
  turns: { turn: number; question: string; attempts: AttemptRecord[] }[];
}
