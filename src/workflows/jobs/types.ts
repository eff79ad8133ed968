/** Data model of the delegate job protocol (wire-compatible with the seed). Types only. */

export const JOB_EVENTS = ['started', 'permission_required', 'progress', 'completed', 'error'] as const;
export type JobEventName = (typeof JOB_EVENTS)[number];
export const TERMINAL_EVENTS: readonly JobEventName[] = ['completed', 'error'];

export const JOB_STATUSES = ['pending', 'running', 'completed', 'error', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export type JobType = 'direct' | 'loop' | 'discuss';
export type AgentKind = 'command' | 'tmux' | 'human';

/** The seed record's `broker` block. refinery never writes a password into it. */
export interface RecordBroker {
  host: string;
  port: number;
  tls: boolean;
  username: string | null;
  password: string | null;
}

/** `<registry>/<job_id>.json`, field for field as the seed writes it (spec §2.2). */
export interface JobRecord {
  schema_version: 1;
  job_id: string;
  status: JobStatus;
  created_at: string;
  updated_at: string;
  prompt: string;
  agent: string;
  agent_session: string;
  broker: RecordBroker;
  topic_prefix: string;
  timeout_sec: number;
  idle_timeout_sec: number;
  expected_artifacts: string[];
  last_seq: number;
  /** null: a compat job (accepts the seed's Python publisher, which sends no token). */
  auth_token: string | null;
}

/**
 * refinery's own per-job settings, kept out of the record (the Python side may rewrite records
 * and drop unknown keys): `<registry>/.refinery/<job_id>.json`.
 */
export interface JobExtras {
  job_id: string;
  job_type: JobType;
  agent_kind: AgentKind;
  reviewer: string | null;
  reviewer_session: string | null;
  max_iterations: number;
  iteration: number;
  /** The broker URL without credentials, when the record block cannot express it (ws, wss, a path). */
  broker_url: string | null;
  /**
   * True when the job's topics sit on refinery's embedded broker behind the job's login (see
   * event-auth.ts brokerCredential); its clients must present it.
   */
  broker_guarded?: boolean;
  /** The latest reviewer verdict text for loop/discuss jobs. */
  feedback: string | null;
}

/** The MQTT payload on `<topic_prefix>/events` (spec §1.5). */
export interface JobEventPayload {
  schema_version: 1;
  seq: number;
  job_id: string;
  event: JobEventName;
  timestamp: string;
  detail: string;
  data?: Record<string, unknown>;
}

/** One line of `.mam/delegate_job_logs/<id>/events.ndjson`. */
export interface AuditLine {
  job_id: string;
  /** A protocol event name, or a local one: registered, dropped, outcome, validation, iteration, agent-exit. */
  event: string;
  timestamp: string;
  source: 'mqtt' | 'refinery';
  seq?: number;
  detail?: string;
  data?: Record<string, unknown>;
  received_at?: string;
}

/** `.mam/delegate_job_logs/<id>/status.json`. */
export interface AuditStatus {
  job_id: string;
  status: JobStatus;
  updated_at: string;
  outcome?: JobOutcomeKind;
  reason?: string;
  iteration?: number;
  validation?: 'pass' | 'fail';
}

export type JobOutcomeKind = 'completed' | 'error' | 'timeout';

/** Exit codes of `jobs wait` / `jobs submit`, as the seed's subscriber. */
export const OUTCOME_EXIT_CODES: Record<JobOutcomeKind, number> = { completed: 0, error: 1, timeout: 2 };
