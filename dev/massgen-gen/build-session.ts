// Runs a scenario script turn by turn and attempt by attempt into a LogDirRecord.
import { MILLI, SECOND, snapshotStamp } from './clock.ts';
import type { AttemptRecord, LogDirRecord, ScenarioScript, TokenDelta } from './model.ts';
import { createRng } from './prng.ts';
import { AttemptSim } from './simulate.ts';
import { addTokens, zeroTokens } from './tokens.ts';

/** Fixed base time (2025-12-01 09:00:00 local, in the past so a killed run reads as dead, not running); each scenario starts 10 minutes after the previous. */
const BASE = Date.UTC(2025, 11, 1, 9, 0, 0) * 1000;

function carry(prev: AttemptRecord['carried'], rec: AttemptRecord): NonNullable<AttemptRecord['carried']> {
  const usage: Record<string, TokenDelta> = {};
  for (const a of rec.agents) usage[a] = addTokens(prev?.usage[a] ?? zeroTokens(), rec.usage[a] ?? zeroTokens());
  return {
    rounds: [...(prev?.rounds ?? []), ...rec.rounds],
    usage,
    apiCalls: [...(prev?.apiCalls ?? []), ...rec.apiCalls],
  };
}

export function buildLogDir(script: ScenarioScript, index: number, seed: number): LogDirRecord {
  const rng = createRng(seed, script.name);
  const logStart = BASE + index * 600 * SECOND + rng.int(0, 59) * SECOND + rng.int(0, 999_999);
  const logName = `log_${snapshotStamp(logStart)}`;
  let t = logStart + rng.int(8, 25) * MILLI;
  let carried: AttemptRecord['carried'] = null;
  const turns: LogDirRecord['turns'] = [];
  script.turns.forEach((turn, ti) => {
    const attempts: AttemptRecord[] = [];
    turn.attempts.forEach((steps, ai) => {
      const rec = new AttemptSim({
        scenario: script.name,
        logName,
        logDirRel: `.massgen/massgen_logs/${logName}/turn_${ti + 1}/attempt_${ai + 1}`,
        turn: ti + 1,
        attempt: ai + 1,
        question: turn.question,
        agents: script.agents,
        model: script.model,
        mode: script.mode,
        steps,
        start: t,
        rng,
        hasHistory: ti > 0,
        carried: script.mode === 'interactive' ? carried : null,
      }).run();
      attempts.push(rec);
      t = rec.end + rng.int(1, 3) * SECOND + rng.int(0, 999_999);
    });
    const last = attempts[attempts.length - 1];
    if (last && script.mode === 'interactive') carried = carry(carried, last);
    if (last) t = last.end + rng.int(20, 60) * SECOND + rng.int(0, 999_999);
    turns.push({ turn: ti + 1, question: turn.question, attempts });
  });
  return { scenario: script.name, summary: script.summary, logName, mode: script.mode, agents: script.agents, model: script.model, turns };
}
