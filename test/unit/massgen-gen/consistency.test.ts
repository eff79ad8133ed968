// Reads the generated files back with small independent code and checks that the numbers
// agree across files and with MANIFEST.json, the way they do in real MassGen output.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = mkdtempSync(join(tmpdir(), 'massgen-gen-consistency-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface AttemptCase {
  dir: string;
  run: Json;
  turn: Json;
  entry: Json;
}

let manifest: Json;
const cases: AttemptCase[] = [];
const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8'));
const jsonl = (path: string): Json[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const countBy = (items: string[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const i of items) out[i] = (out[i] ?? 0) + 1;
  return out;
};
const sorted = (o: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const SNAPSHOT = /^\d{8}_\d{6}_\d{6}$/;

function snapshots(dir: string, agents: string[], file: string): Json[] {
  const out: Json[] = [];
  for (const agent of agents) {
    const adir = join(dir, agent);
    if (!existsSync(adir)) continue;
    for (const ts of readdirSync(adir).filter((n) => SNAPSHOT.test(n))) {
      const p = join(adir, ts, file);
      if (existsSync(p)) out.push({ agent, ts, path: `${agent}/${ts}/${file}`, text: readFileSync(p, 'utf8') });
    }
  }
  return out;
}

beforeAll(() => {
  generateLogs({ outDir: root, seed: 3 });
  manifest = readJson(join(root, 'MANIFEST.json'));
  for (const run of manifest.runs) {
    for (const turn of run.turns) {
      for (const entry of turn.attempts) cases.push({ dir: join(root, entry.path), run, turn, entry });
    }
  }
});

describe('generated logs - cross-file consistency', () => {
  it('MANIFEST - covers the five scenarios with their distinguishing features', () => {
    const byName = Object.fromEntries(manifest.runs.map((r: Json) => [r.scenario, r]));
    expect(Object.keys(byName).sort()).toEqual(['consensus', 'crashed', 'enforcement', 'multi-turn', 'restart']);
    expect(byName.consensus.turns[0].attempts[0].winner).toBe('agent_b');
    const enf = byName.enforcement.turns[0].attempts[0];
    for (const code of ['vote_no_answers', 'no_tool_calls', 'invalid_vote_id', 'vote_and_answer', 'no_workflow_tool'])
      expect(enf.enforcement.by_reason[code]).toBeGreaterThan(0);
    expect(enf.revoters.length).toBeGreaterThan(0);
    expect(enf.votes_ignored).toBeGreaterThan(0);
    expect(byName.restart.turns[0].attempts.map((a: Json) => a.outcome)).toEqual(['restarted', 'completed']);
    expect(byName['multi-turn'].turns.length).toBe(2);
    expect(byName.crashed.turns[0].attempts[0].outcome).toBe('killed');
  });

  it('status.json - answers and votes agree with snapshot dirs, events.jsonl and the manifest', () => {
    for (const c of cases) {
      const status = readJson(join(c.dir, 'status.json'));
      const agents = Object.keys(status.agents);
      const answers = snapshots(c.dir, agents, 'answer.txt');
      const votes = snapshots(c.dir, agents, 'vote.json').map((v) => ({ ...v, json: JSON.parse(v.text) }));
      const events = jsonl(join(c.dir, 'events.jsonl'));
      expect(answers.length, c.dir).toBe(c.entry.answers);
      expect(sum(agents.map((a) => status.agents[a].answer_count))).toBe(c.entry.answers);
      expect(status.historical_workspaces.length).toBe(c.entry.answers);
      expect(events.filter((e) => e.event_type === 'answer_submitted').length).toBe(c.entry.answers);
      expect(votes.length).toBe(c.entry.votes_cast);
      expect(events.filter((e) => e.event_type === 'vote').length).toBe(c.entry.votes_cast);
      expect(sum(Object.values(status.results.votes) as number[])).toBe(c.entry.votes_cast);
      expect(status.results.votes).toEqual(c.entry.results_votes);
      expect(sorted(countBy(votes.map((v) => v.json.voted_for_label)))).toEqual(sorted(status.results.votes));
      expect(sorted(countBy(votes.map((v) => v.agent)))).toEqual(c.entry.votes_by_voter);
      for (const agent of agents) {
        const mine = votes.filter((v) => v.agent === agent).sort((x, y) => x.json.unix_timestamp - y.json.unix_timestamp);
        const first = mine[0];
        expect(status.agents[agent].vote_cast, `${c.dir} ${agent}`).toEqual(
          first
            ? { voted_for_agent: first.json.voted_for, voted_for_label: first.json.voted_for_label, reason_preview: first.json.reason }
            : null,
        );
      }
      const n = agents.length;
      expect(status.coordination.completion_percentage).toBe(
        Math.min(100, Math.trunc(((c.entry.answers + c.entry.votes_cast) / (2 * n)) * 100)),
      );
      expect(status.results.winner).toBe(c.entry.outcome === 'killed' ? null : c.entry.winner);
    }
  });

  it('status.json - reliability totals match their entries and the manifest reason counts', () => {
    for (const c of cases) {
      const status = readJson(join(c.dir, 'status.json'));
      const reasons: string[] = [];
      let chars = 0;
      for (const [agent, a] of Object.entries<Json>(status.agents)) {
        const rel = a.reliability;
        if (rel === null) {
          expect(c.entry.enforcement.by_agent[agent]).toBeUndefined();
          continue;
        }
        expect(rel.total_enforcement_retries).toBe(rel.enforcement_attempts.length);
        expect(rel.total_buffer_chars_lost).toBe(sum(rel.enforcement_attempts.map((e: Json) => e.buffer_chars)));
        for (const e of rel.enforcement_attempts) {
          expect(e.buffer_chars).toBe(e.buffer_preview === null ? 0 : [...e.buffer_preview].length);
          reasons.push(e.reason);
        }
        const byRound = countBy(rel.enforcement_attempts.map((e: Json) => String(e.round)));
        expect(Object.fromEntries(Object.entries<Json>(rel.by_round).map(([k, v]) => [k, v.count]))).toEqual(byRound);
        expect(rel.outcome).toBe('ok');
        expect(rel.unknown_tools).toEqual([]);
        chars += rel.total_buffer_chars_lost;
      }
      expect(sorted(countBy(reasons))).toEqual(c.entry.enforcement.by_reason);
      expect(chars).toBe(c.entry.enforcement.buffer_chars_lost);
    }
  });

  it('status.json and metrics_summary.json - token, cost and round aggregates add up', () => {
    for (const c of cases) {
      const status = readJson(join(c.dir, 'status.json'));
      const agents = Object.values<Json>(status.agents);
      const history = agents.flatMap((a) => a.round_history);
      expect(status.costs.total_input_tokens).toBe(sum(agents.map((a) => a.token_usage.input_tokens)));
      expect(status.costs.total_output_tokens).toBe(sum(agents.map((a) => a.token_usage.output_tokens)));
      expect(status.rounds.total_rounds).toBe(history.length);
      expect(status.rounds.total_round_input_tokens).toBe(sum(history.map((r) => r.input_tokens)));
      // interrupted calls (ignored votes, enforcement retries) are billed but not recorded as rounds
      const interrupted = c.entry.votes_ignored + c.entry.enforcement.total > 0;
      if (interrupted) expect(status.costs.total_input_tokens).toBeGreaterThan(status.rounds.total_round_input_tokens);
      else expect(status.costs.total_input_tokens).toBe(status.rounds.total_round_input_tokens);
      for (const o of ['answer', 'vote', 'presentation'])
        expect(status.rounds.by_outcome[o]).toBe(history.filter((r) => r.outcome === o).length);
      expect(status.costs.total_estimated_cost).toBeCloseTo(sum(agents.map((a) => a.token_usage.estimated_cost)), 9);
      if (!c.entry.end_of_run_files) continue;
      const summary = readJson(join(c.dir, 'metrics_summary.json'));
      const events = readJson(join(c.dir, 'metrics_events.json'));
      expect(summary.totals.input_tokens).toBe(status.costs.total_input_tokens);
      expect(summary.totals.estimated_cost).toBe(status.costs.total_estimated_cost);
      expect(summary.rounds.total_rounds).toBe(status.rounds.total_rounds);
      expect(summary.rounds.by_outcome).toEqual(status.rounds.by_outcome);
      expect(events.round_completions.length).toBe(summary.rounds.total_rounds);
      expect(summary.meta.winner).toBe(c.entry.winner);
      const byRound = Object.values<Json>(summary.api_timing.by_round);
      expect(sum(byRound.map((r) => r.calls))).toBe(summary.api_timing.total_calls);
      if (!c.entry.metrics_cumulative_with_earlier_turns) {
        expect(history.length).toBe(c.entry.rounds_recorded);
        expect(status.costs.total_input_tokens).toBe(c.entry.tokens_this_attempt.input);
      }
    }
  });

  it('coordination_events.json and snapshot_mappings.json - agree with snapshots and the manifest', () => {
    for (const c of cases.filter((x) => x.entry.end_of_run_files)) {
      const coord = readJson(join(c.dir, 'coordination_events.json'));
      const types = coord.events.map((e: Json) => e.event_type) as string[];
      const count = (t: string): number => types.filter((x) => x === t).length;
      expect(count('new_answer')).toBe(c.entry.answers);
      expect(count('vote_cast')).toBe(c.entry.votes_cast);
      expect(count('vote_ignored')).toBe(c.entry.votes_ignored);
      expect(count('session_start')).toBe(2);
      expect(coord.session_metadata.final_winner).toBe(c.entry.winner);
      expect(coord.events.filter((e: Json) => e.event_type === 'new_answer').map((e: Json) => e.context.label)).toEqual(
        c.entry.answer_labels,
      );
      const mappings = Object.values<Json>(readJson(join(c.dir, 'snapshot_mappings.json')));
      for (const m of mappings) expect(statSync(join(c.dir, m.path)).isFile()).toBe(true);
      expect(mappings.filter((m) => m.type === 'answer').length).toBe(c.entry.answers);
      expect(mappings.filter((m) => m.type === 'vote').length).toBe(c.entry.votes_cast);
      expect(mappings.filter((m) => m.type === 'final_answer').map((m) => m.agent_id)).toEqual([c.entry.winner]);
      const finalAnswer = readFileSync(join(c.dir, 'final', c.entry.winner, 'answer.txt'), 'utf8');
      expect(finalAnswer.startsWith(readJson(join(c.dir, 'status.json')).results.final_answer_preview)).toBe(true);
    }
  });

  it('turn-level final/ - copies the last attempt final answer; killed runs have no end-of-run files', () => {
    for (const run of manifest.runs) {
      for (const turn of run.turns) {
        const last = turn.attempts[turn.attempts.length - 1];
        const turnDir = join(root, run.log_dir, `turn_${turn.turn}`);
        if (!turn.completed) {
          expect(existsSync(join(turnDir, 'final'))).toBe(false);
          const files = readdirSync(join(root, last.path)).sort();
          const agents = Object.keys(readJson(join(root, last.path, 'status.json')).agents).sort();
          expect(files).toEqual(
            [...agents, 'agent_outputs', 'events.jsonl', 'execution_metadata.yaml', 'massgen.log', 'status.json'].sort(),
          );
          const status = readJson(join(root, last.path, 'status.json'));
          expect([status.finish_reason, status.is_complete, status.coordination.phase]).toEqual(['in_progress', false, 'enforcement']);
          continue;
        }
        const turnFinal = readFileSync(join(turnDir, 'final', turn.winner, 'answer.txt'));
        expect(turnFinal.equals(readFileSync(join(root, last.path, 'final', turn.winner, 'answer.txt')))).toBe(true);
      }
    }
  });

  it('restart and multi-turn - attempt_2 metadata is a coordination restart; turn_2 metrics repeat turn_1 rounds', () => {
    const restart = manifest.runs.find((r: Json) => r.scenario === 'restart');
    const [a1, a2] = restart.turns[0].attempts;
    expect(jsonl(join(root, a1.path, 'events.jsonl')).some((e) => e.event_type === 'restart_banner')).toBe(true);
    const meta2 = readFileSync(join(root, a2.path, 'execution_metadata.yaml'), 'utf8');
    expect(meta2).toContain('mode: coordination_restart');
    expect(meta2).not.toContain('config_path');
    const multi = manifest.runs.find((r: Json) => r.scenario === 'multi-turn');
    const t1 = readJson(join(root, multi.turns[0].attempts[0].path, 'status.json'));
    const t2 = readJson(join(root, multi.turns[1].attempts[0].path, 'status.json'));
    expect(multi.turns[1].attempts[0].metrics_cumulative_with_earlier_turns).toBe(true);
    expect(t2.rounds.total_rounds).toBe(t1.rounds.total_rounds + multi.turns[1].attempts[0].rounds_recorded);
    expect(t2.costs.total_input_tokens).toBe(t1.costs.total_input_tokens + multi.turns[1].attempts[0].tokens_this_attempt.input);
    for (const agent of Object.keys(t1.agents)) {
      expect(t2.agents[agent].round_history.slice(0, t1.agents[agent].round_history.length)).toEqual(t1.agents[agent].round_history);
    }
  });
});
