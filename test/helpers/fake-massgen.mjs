#!/usr/bin/env node
// A stand-in for the `massgen` CLI (MassGen cannot be installed here), speaking its automation
// protocol as MassGen v0.1.91's massgen/cli.py does:
//   massgen --version
//   massgen --automation [--stream-events] [--logfire ...] --config CONFIG "QUESTION"
// It prints LOG_DIR:/STATUS: (absolute paths) first (on stderr with --stream-events, stdout then
// carrying events.jsonl records), rewrites status.json in place while it runs, appends to
// agent_outputs/, and finishes with a real MassGen log (test/fixtures/massgen-v0191/<fixture>)
// copied into its log dir, then prints ANSWER: and exits 0.
//
// What each run does is read from `# fake-massgen: key=value ...` lines in the config (so one
// config of a grid can fail), else from the environment:
//   mode=ok|fail|hang        FAKE_MASSGEN_MODE       fail: agent errors in status.json, stderr lines, exit 1;
//                                                    hang: starts a grandchild that hangs too, never ends
//   duration_ms=N            FAKE_MASSGEN_DURATION_MS how long a run takes (default 600)
//   tick_ms=N                FAKE_MASSGEN_TICK_MS    how often status.json is rewritten (default duration/4, ≤ 500)
//   fixture=NAME             FAKE_MASSGEN_FIXTURE    consensus-3 (default), enforcement, api-error
//   half_written=1           FAKE_MASSGEN_HALF_WRITTEN  status.json left half-written for a tick, in place
//   version=TEXT             FAKE_MASSGEN_VERSION    what --version prints (default 0.1.91)
// FAKE_MASSGEN_OVERRIDE='key=value ...' wins over the config's lines (a rerun of the same config that behaves).
// FAKE_MASSGEN_CALLS=FILE appends one line per start ("version" or "run CONFIG"); FAKE_MASSGEN_PIDS=FILE
// appends the pid of each hanging grandchild.
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/massgen-v0191');
const args = process.argv.slice(2);

function record(line) {
  if (process.env.FAKE_MASSGEN_CALLS) appendFileSync(process.env.FAKE_MASSGEN_CALLS, `${line}\n`);
}

function options(configText) {
  const out = {
    mode: process.env.FAKE_MASSGEN_MODE ?? 'ok',
    duration_ms: process.env.FAKE_MASSGEN_DURATION_MS ?? '600',
    tick_ms: process.env.FAKE_MASSGEN_TICK_MS,
    fixture: process.env.FAKE_MASSGEN_FIXTURE ?? 'consensus-3',
    half_written: process.env.FAKE_MASSGEN_HALF_WRITTEN ?? '0',
  };
  const lines = [...configText.matchAll(/^#\s*fake-massgen:(.*)$/gm)].map((m) => m[1]);
  for (const line of [...lines, process.env.FAKE_MASSGEN_OVERRIDE ?? ''])
    for (const pair of line.trim().split(/\s+/)) {
      const [k, v] = pair.split('=');
      if (k && v !== undefined) out[k] = v;
    }
  const duration = Number(out.duration_ms);
  return { ...out, duration, tick: Number(out.tick_ms ?? Math.min(500, Math.max(20, duration / 4))) };
}

function parseArgs() {
  let config;
  let streamEvents = false;
  const positional = [];
  for (let i = 0; i < args.length; i += 1) {
    const a = args[i];
    if (a === '--config') config = args[++i];
    else if (a === '--stream-events') streamEvents = true;
    else if (a.startsWith('--'))
      continue; // --automation, --logfire, ...: accepted, no effect here
    else positional.push(a);
  }
  return { config, streamEvents, question: positional.join(' ') };
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

/** log_YYYYMMDD_HHMMSS_ffffff, made unique among runs started in the same microsecond. */
function makeLogDir(base) {
  mkdirSync(base, { recursive: true });
  const d = new Date();
  for (let extra = 0; ; extra += 1) {
    const micro = (d.getMilliseconds() * 1000 + ((process.pid * 7 + extra) % 1000)) % 1_000_000;
    const name = `log_${d.getFullYear()}${pad(d.getMonth() + 1)}${pad(d.getDate())}_${pad(d.getHours())}${pad(d.getMinutes())}${pad(d.getSeconds())}_${pad(micro, 6)}`;
    try {
      mkdirSync(path.join(base, name));
      return path.join(base, name);
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
}

function fixtureRoot(name) {
  const dir = path.join(FIXTURES, name);
  const log = readdirSync(dir).find((n) => n.startsWith('log_'));
  return path.join(dir, log);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  if (args.includes('--version')) {
    record('version');
    const text = readConfigOptions().version ?? process.env.FAKE_MASSGEN_VERSION ?? '0.1.91';
    process.stdout.write(`massgen ${text}\n`);
    return 0;
  }
  const { config, streamEvents, question } = parseArgs();
  if (!config || !question) {
    process.stderr.write('usage: massgen --automation --config CONFIG "QUESTION"\n');
    return 2;
  }
  record(`run ${config}`);
  let configText;
  try {
    configText = readFileSync(config, 'utf8');
  } catch (error) {
    process.stderr.write(`Error: config file not found: ${config} (${error.code})\n`);
    return 1;
  }
  const opt = options(configText);
  const source = fixtureRoot(opt.fixture);
  const finalStatus = JSON.parse(readFileSync(path.join(source, 'turn_1/attempt_1/status.json'), 'utf8'));
  const agents = Object.keys(finalStatus.agents);
  const logDir = makeLogDir(path.resolve('.massgen/massgen_logs'));
  const attempt = path.join(logDir, 'turn_1', 'attempt_1');
  mkdirSync(path.join(attempt, 'agent_outputs'), { recursive: true });
  const statusFile = path.join(attempt, 'status.json');
  const info = (line) => (streamEvents ? process.stderr : process.stdout).write(`${line}\n`);
  info(`LOG_DIR: ${logDir}`);
  info(`STATUS: ${statusFile}`);
  info(`QUESTION: ${question}`);
  info('[Coordination in progress - monitor status.json for real-time updates]');
  const started = Date.now() / 1000;
  const event = (event_type, agent_id, data) => {
    if (streamEvents)
      process.stdout.write(`${JSON.stringify({ timestamp: new Date().toISOString(), event_type, agent_id, round_number: 0, data })}\n`);
  };

  const status = (pct, agentStatus, extra = {}) => ({
    finish_reason: 'in_progress',
    finish_reason_details: `Phase: ${pct >= 50 ? 'enforcement' : 'initial_answer'}`,
    is_complete: false,
    review_pending: false,
    meta: {
      last_updated: Date.now() / 1000,
      session_id: 'attempt_1',
      log_dir: attempt,
      question,
      start_time: started,
      elapsed_seconds: Date.now() / 1000 - started,
    },
    coordination: {
      phase: pct >= 50 ? 'enforcement' : 'initial_answer',
      active_agent: null,
      completion_percentage: pct,
      is_final_presentation: false,
    },
    agents: Object.fromEntries(
      agents.map((a) => [
        a,
        {
          status: agentStatus(a),
          answer_count: 0,
          latest_answer_label: null,
          vote_cast: null,
          times_restarted: 0,
          last_activity: Date.now() / 1000,
          error: null,
        },
      ]),
    ),
    results: { votes: {}, winner: null, final_answer_preview: null },
    ...extra,
  });
  const writeStatus = async (value, half) => {
    const text = JSON.stringify(value, null, 2);
    if (half) {
      // In place, cut mid-object, for a whole tick: what a reader may meet.
      writeFileSync(statusFile, text.slice(0, Math.floor(text.length / 2)));
      await sleep(opt.tick);
    }
    writeFileSync(statusFile, text);
  };

  if (opt.mode === 'hang') {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    if (process.env.FAKE_MASSGEN_PIDS) appendFileSync(process.env.FAKE_MASSGEN_PIDS, `${child.pid}\n`);
    await writeStatus(status(0, () => 'waiting'));
    event('session_start', null, {});
    setInterval(() => {
      writeFileSync(statusFile, JSON.stringify(status(10, () => 'streaming')));
    }, opt.tick);
    return new Promise(() => {});
  }

  const steps = Math.max(1, Math.round(opt.duration / opt.tick));
  event('session_start', null, { question });
  for (let i = 0; i < steps; i += 1) {
    const pct = Math.min(100, Math.floor((i / steps) * 100));
    const stateOf = (a) => (pct === 0 ? 'waiting' : pct < 50 ? (agents.indexOf(a) % 2 ? 'streaming' : 'answered') : 'voted');
    await writeStatus(status(pct, stateOf), opt.half_written === '1' && i === 1);
    for (const a of agents) {
      appendFileSync(path.join(attempt, 'agent_outputs', `${a}.txt`), `[${a}] step ${i + 1}/${steps}: thinking about ${question}\n`);
      event('text', a, { content: `step ${i + 1}` });
    }
    if (opt.mode === 'fail' && i >= steps / 2) {
      const failed = status(pct, (a) => (a === agents[0] ? 'error' : 'streaming'), {
        finish_reason: 'error',
        finish_reason_details: `Agent(s) encountered errors: ${agents[0]}`,
      });
      failed.agents[agents[0]].error = {
        type: 'error',
        message: 'Error code: 500 - upstream model server failed',
        timestamp: Date.now() / 1000,
      };
      await writeStatus(failed, false);
      process.stderr.write('Traceback (most recent call last):\n  File "massgen/orchestrator.py", line 1, in chat\n');
      process.stderr.write(`RuntimeError: agent ${agents[0]} failed: Error code: 500\n`);
      return 1;
    }
    // Step i ends at its place on a clock that starts with the process: the run takes
    // duration_ms from its start, Node's own start included, however long each step's writes took.
    await sleep(Math.max(0, (i + 1) * opt.tick - performance.now()));
  }
  // The end: the real log of a finished run, in this run's log dir.
  cpSync(source, logDir, { recursive: true, force: true, verbatimSymlinks: true });
  const winner = finalStatus.results.winner;
  event('session_end', null, { winner });
  process.stdout.write(`ANSWER: ${path.join(logDir, 'turn_1', 'final', winner, 'answer.txt')}\n`);
  return 0;
}

function readConfigOptions() {
  const i = args.indexOf('--config');
  if (i < 0) return {};
  try {
    return options(readFileSync(args[i + 1], 'utf8'));
  } catch {
    return {};
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`fake massgen: ${error.stack}\n`);
    process.exit(1);
  },
);
