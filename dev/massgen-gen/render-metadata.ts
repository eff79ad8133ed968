// execution_metadata.yaml (logger_config.save_execution_metadata) for the three CLI paths the
// bundled scenarios use: automation, interactive turns and a coordination restart.
import { isoLocal, MILLI, snapshotStamp, type Micros } from './clock.ts';
import type { AttemptRecord } from './model.ts';
import { pyYamlDump, type YamlValue } from './py-yaml.ts';
import { WORKING_DIRECTORY } from './render-status.ts';

const PYTHON = '3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0]';

const AUTOMATION_FLAGS: [string, YamlValue][] = [
  ['select', false],
  ['backend', null],
  ['model', null],
  ['system_message', null],
  ['base_url', null],
  ['no_display', false],
  ['display', null],
  ['no_logs', false],
  ['debug', false],
  ['save_streaming_buffers', false],
  ['logfire', false],
  ['web', false],
  ['automation', true],
  ['step', false],
  ['session_dir', null],
  ['stream_events', false],
  ['plan', false],
  ['eval_criteria', null],
  ['output_file', null],
  ['session_id', null],
  ['continue_session', false],
  ['orchestrator_timeout', null],
  ['rate_limit', false],
  ['single_agent', null],
  ['coordination_mode', null],
  ['quick', false],
  ['personas', null],
  ['fast', false],
];

function config(rec: AttemptRecord, restarts: boolean): YamlValue {
  const orchestrator: Record<string, YamlValue> = { max_new_answers_per_agent: 3 };
  if (restarts) orchestrator.max_orchestration_restarts = 2;
  return {
    agents: rec.agents.map((id) => ({
      id,
      backend: { type: 'chatcompletion', model: rec.model, base_url: `http://127.0.0.1:8765/v1` },
    })),
    orchestrator,
    timeout_settings: { orchestrator_timeout_seconds: 240 },
  };
}

export function sessionId(firstStart: Micros): string {
  return `session_${snapshotStamp(firstStart).slice(0, 15)}`;
}

export function renderMetadata(rec: AttemptRecord, opts: { restarts: boolean; firstStart: Micros }): string {
  const doc: Record<string, YamlValue> = { query: rec.question, timestamp: isoLocal(rec.start - 14 * MILLI) };
  if (rec.attempt > 1) {
    doc.cli_args = {
      mode: 'coordination_restart',
      turn: rec.turn,
      session_id: sessionId(opts.firstStart),
      attempt: rec.attempt,
      restart_reason: 'post_evaluation',
    };
  } else {
    doc.config_path = 'config.yaml';
    doc.config = config(rec, opts.restarts);
    doc.cli_args =
      rec.mode === 'interactive'
        ? { mode: 'interactive', turn: rec.turn, session_id: sessionId(opts.firstStart) }
        : Object.fromEntries([['question', rec.question], ['config', 'config.yaml'], ...AUTOMATION_FLAGS]);
  }
  doc.python_version = PYTHON;
  doc.massgen_version = '0.1.91';
  doc.working_directory = WORKING_DIRECTORY;
  return pyYamlDump(doc);
}
