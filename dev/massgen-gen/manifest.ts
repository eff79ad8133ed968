// MANIFEST.json: what each generated log dir contains, computed from the scenario model (not
// from the rendered files), so analyzer tests can compare their counts with it.
import type { AttemptRecord, LogDirRecord } from './model.ts';
import { resultsVotes } from './render-status.ts';
import { sumTokens } from './metrics-common.ts';

const countBy = <T>(items: T[], key: (t: T) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
};

function attemptEntry(rec: AttemptRecord): Record<string, unknown> {
  const tokens = sumTokens(Object.values(rec.usage));
  return {
    attempt: rec.attempt,
    path: `${rec.logName}/turn_${rec.turn}/attempt_${rec.attempt}`,
    outcome: rec.outcome,
    restart_reason: rec.restartReason,
    winner: rec.final?.winner ?? null,
    final_label: rec.final?.label ?? null,
    end_of_run_files: rec.outcome !== 'killed',
    answers: rec.answers.length,
    answers_by_agent: countBy(rec.answers, (a) => a.agent),
    answer_labels: rec.answers.map((a) => a.label),
    results_votes: resultsVotes(rec),
    votes_cast: rec.votes.length,
    votes_by_voter: countBy(rec.votes, (v) => v.agent),
    final_vote_counts: rec.final?.voteCounts ?? null,
    votes_ignored: rec.ignored.length,
    revoters: Object.entries(countBy(rec.votes, (v) => v.agent))
      .filter(([, n]) => n > 1)
      .map(([a]) => a),
    enforcement: {
      total: rec.enforcement.length,
      by_reason: countBy(rec.enforcement, (e) => e.reason),
      by_agent: countBy(rec.enforcement, (e) => e.agent),
      buffer_chars_lost: rec.enforcement.reduce((n, e) => n + e.bufferChars, 0),
    },
    rounds_recorded: rec.rounds.length,
    metrics_cumulative_with_earlier_turns: rec.carried !== null,
    tokens_this_attempt: { input: tokens.input, output: tokens.output, reasoning: tokens.reasoning, cost_usd: tokens.costMicros / 1e6 },
    duration_seconds: Math.round((rec.end - rec.start) / 1000) / 1000,
  };
}

export function buildManifest(seed: number, dirs: LogDirRecord[]): Record<string, unknown> {
  return {
    generator: 'scripts/gen-massgen-logs.ts',
    massgen_version: '0.1.91',
    seed,
    note: "Counts are per attempt. results_votes counts every accepted vote (re-votes included, ignored votes excluded); final_vote_counts counts each voter's latest vote.",
    runs: dirs.map((d) => ({
      log_dir: d.logName,
      scenario: d.scenario,
      summary: d.summary,
      mode: d.mode,
      model: d.model,
      agents: d.agents,
      agent_labels: Object.fromEntries([...d.agents].sort().map((a, i) => [a, `agent${i + 1}`])),
      turns: d.turns.map((t) => {
        const last = t.attempts[t.attempts.length - 1];
        return {
          turn: t.turn,
          question: t.question,
          final_attempt: last?.attempt ?? null,
          winner: last?.final?.winner ?? null,
          completed: last?.outcome === 'completed',
          attempts: t.attempts.map(attemptEntry),
        };
      }),
    })),
  };
}
