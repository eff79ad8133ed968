import path from 'node:path';
import { redactSecretsDeep } from '../../../security/known-secrets.ts';
import type { ConfigFingerprint } from './config-files.ts';
import type { MassgenOutcome } from './massgen-process.ts';
import { agentErrors } from './status-progress.ts';

/** experiment.json (schemas/experiment.schema.json). */
export interface ExperimentRecord {
  schema_version: 1;
  config: string;
  config_sha256: string;
  config_files: Record<string, string>;
  question: string;
  repeat: number;
  command: string[];
  massgen_version: string;
  log_dir: string | null;
  turn_dir: string | null;
  status_file: string | null;
  answer_file: string | null;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  ok: boolean;
  winner: string | null;
  finish_reason: string | null;
  started_at: string;
  duration_ms: number;
  stderr_tail: string[];
  agent_errors: string[];
}

/** A path inside the project as relative (portable between clones), one outside it as it is. */
function projectPath(root: string, abs: string | undefined): string | null {
  if (abs === undefined) return null;
  const rel = path.relative(root, abs);
  return rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel.split(path.sep).join('/');
}

/** The turn of the run: the STATUS line's turn_N (…/turn_N/attempt_M/status.json), else turn_1. */
function turnDir(outcome: MassgenOutcome): string | undefined {
  if (!outcome.logDir) return undefined;
  const m = outcome.statusFile ? /[/\\](turn_\d+)[/\\]/.exec(outcome.statusFile) : null;
  return path.join(outcome.logDir, m?.[1] ?? 'turn_1');
}

export function experimentRecord(
  root: string,
  cell: { config: ConfigFingerprint; question: string; repeat: number; command: string[]; version: string; startedAt: Date },
  outcome: MassgenOutcome,
): ExperimentRecord {
  const ok = outcome.exitCode === 0 && !outcome.timedOut && outcome.logDir !== undefined;
  // stderr and agent errors may quote a key MassGen was given: redacted before they are written.
  return redactSecretsDeep({
    schema_version: 1,
    config: cell.config.config,
    config_sha256: cell.config.sha256,
    config_files: cell.config.files,
    question: cell.question,
    repeat: cell.repeat,
    command: cell.command,
    massgen_version: cell.version,
    log_dir: projectPath(root, outcome.logDir),
    turn_dir: projectPath(root, turnDir(outcome)),
    status_file: projectPath(root, outcome.statusFile),
    answer_file: projectPath(root, outcome.answerFile),
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    timed_out: outcome.timedOut,
    ok,
    winner: outcome.lastStatus?.winner ?? null,
    finish_reason: outcome.lastStatus?.finishReason ?? null,
    started_at: cell.startedAt.toISOString(),
    duration_ms: Math.max(0, Math.round(outcome.durationMs)),
    stderr_tail: outcome.stderrTail,
    agent_errors: agentErrors(outcome.lastStatus),
  });
}

/** Why a recorded run failed, in a few lines: what ended it, its last stderr lines, its agents' errors. */
export function failureText(record: ExperimentRecord, timeoutS?: number): string {
  const why = record.timed_out
    ? `MassGen ran past the timeout${timeoutS ? ` of ${timeoutS} s` : ''} and was stopped (its whole process group)`
    : record.log_dir === null && record.exit_code === 0
      ? 'MassGen printed no LOG_DIR line (is it run with --automation?)'
      : `MassGen exited ${record.exit_code ?? `on ${record.signal ?? 'a signal'}`}`;
  const lines = [`${why} (config ${record.config}, repeat ${record.repeat}${record.log_dir ? `, log ${record.log_dir}` : ''})`];
  if (record.agent_errors.length) lines.push('agent errors (status.json):', ...record.agent_errors.map((e) => `  ${e}`));
  if (record.stderr_tail.length) lines.push('last stderr lines:', ...record.stderr_tail.slice(-10).map((l) => `  ${l}`));
  return lines.join('\n');
}
