// Runs one attempt's scripted steps through a small model of MassGen's coordination rules and
// records everything the log writers would see. Every renderer reads only the result, so all
// files of an attempt agree with each other by construction.
import { MILLI, snapshotStamp, type Micros } from './clock.ts';
import { enforcementShape, MUST_USE_WORKFLOW, pyLen, pyPrefix } from './enforcement.ts';
import { finalContext, voteSummary } from './final-context.ts';
import type {
  AgentFinalState,
  AnswerRecord,
  AttemptRecord,
  CoordEvent,
  JsonlEvent,
  ReasonCode,
  Step,
  TokenDelta,
  VoteRecord,
} from './model.ts';
import type { Rng } from './prng.ts';
import type { PyValue } from './py-json.ts';
import { answerText, chunks, criteriaEventData, finalText, roundContext, voteReason } from './texts.ts';
import { addTokens, drawTokens, zeroTokens, type CallKind } from './tokens.ts';
import { answerTrace, voteTrace } from './traces.ts';
import { sessionId } from './render-metadata.ts';

export interface SimInput {
  scenario: string;
  logName: string;
  logDirRel: string;
  turn: number;
  attempt: number;
  question: string;
  agents: string[];
  model: string;
  mode: 'automation' | 'interactive';
  steps: Step[];
  start: Micros;
  rng: Rng;
  hasHistory: boolean;
  carried: AttemptRecord['carried'];
}

interface AgentSim {
  id: string;
  anon: string;
  round: number;
  roundStarts: number;
  display: number;
  seen: string[];
  roundStart: Micros;
  retry: number;
  answers: number;
  votes: number;
  hasVoted: boolean;
  firstVote: VoteRecord | null;
  currentVote: VoteRecord | null;
  lastActivity: Micros;
}

export class ScenarioError extends Error {}

export class AttemptSim {
  private now: Micros;
  private iteration = 0;
  private readonly st = new Map<string, AgentSim>();
  private readonly latest = new Map<string, AnswerRecord>();
  readonly rec: AttemptRecord;

  constructor(private readonly input: SimInput) {
    this.now = input.start;
    const sorted = [...input.agents].sort();
    for (const id of input.agents) {
      this.st.set(id, {
        id,
        anon: `agent${sorted.indexOf(id) + 1}`,
        round: 0,
        roundStarts: 0,
        display: 0,
        seen: [],
        roundStart: input.start,
        retry: 0,
        answers: 0,
        votes: 0,
        hasVoted: false,
        firstVote: null,
        currentVote: null,
        lastActivity: input.start,
      });
    }
    this.rec = {
      scenario: input.scenario,
      logName: input.logName,
      turn: input.turn,
      attempt: input.attempt,
      question: input.question,
      agents: input.agents,
      sortedAgents: sorted,
      model: input.model,
      mode: input.mode,
      start: input.start,
      end: input.start,
      statusAt: input.start,
      answers: [],
      votes: [],
      ignored: [],
      enforcement: [],
      rounds: [],
      usage: Object.fromEntries(input.agents.map((a) => [a, zeroTokens()])),
      apiCalls: [],
      final: null,
      outcome: 'completed',
      restartReason: null,
      agentState: {},
      coordEvents: [],
      jsonl: [],
      logLines: [],
      outputs: Object.fromEntries(input.agents.map((a) => [a, `=== ${a.toUpperCase()} OUTPUT LOG ===\n\n`])),
      activeAgent: null,
      carried: input.carried,
    };
  }

  run(): AttemptRecord {
    this.begin();
    for (const [index, step] of this.input.steps.entries()) {
      try {
        this.step(step);
      } catch (error) {
        if (error instanceof ScenarioError) {
          throw new ScenarioError(
            `scenario ${this.input.scenario} turn ${this.input.turn} attempt ${this.input.attempt} step ${index + 1} (${step.kind}): ${error.message}`,
          );
        }
        throw error;
      }
      if (step.kind === 'kill') break;
    }
    this.finish();
    return this.rec;
  }

  // ---- helpers -------------------------------------------------------------------------

  private agent(id: string): AgentSim {
    const s = this.st.get(id);
    if (!s) throw new ScenarioError(`unknown agent '${id}' (agents: ${this.input.agents.join(', ')})`);
    return s;
  }

  private advance(minMs: number, maxMs: number): Micros {
    this.now += this.input.rng.int(minMs * MILLI, maxMs * MILLI);
    return this.now;
  }

  private bump(): Micros {
    this.now += this.input.rng.int(150, 900);
    return this.now;
  }

  private get labels(): string[] {
    return [...this.latest.values()].map((a) => a.label);
  }

  private get maxRound(): number {
    return Math.max(...[...this.st.values()].map((s) => s.round));
  }

  private stale(s: AgentSim): boolean {
    const now = this.labels;
    return now.length !== s.seen.length || now.some((l, i) => l !== s.seen[i]);
  }

  private coord(type: string, agent: string | null, details: string, context: Record<string, PyValue>, round?: number): void {
    const r = round ?? (agent ? this.agent(agent).round : this.maxRound);
    const ev: CoordEvent = { at: this.bump(), type, agent, details, context: { ...context, iteration: this.iteration, round: r } };
    this.rec.coordEvents.push(ev);
  }

  private iterations(n: number): void {
    for (let i = 0; i < n; i++) {
      this.iteration++;
      this.now += this.input.rng.int(1 * MILLI, 30 * MILLI);
      this.rec.coordEvents.push({
        at: this.now,
        type: 'iteration_start',
        agent: null,
        details: `Starting coordination iteration ${this.iteration}`,
        context: { iteration: this.iteration, available_answers: this.labels, round: this.maxRound },
      });
    }
  }

  private jsonl(type: string, agent: string | null, round: number, data: Record<string, PyValue>, padKind?: 'text' | 'thinking'): void {
    const ev: JsonlEvent = { at: this.bump(), type, agent, round, data };
    if (padKind) ev.padKind = padKind;
    this.rec.jsonl.push(ev);
  }

  private log(message: string, level: 'INFO' | 'WARNING' | 'ERROR' = 'INFO'): void {
    this.rec.logLines.push(`${this.now}\t${level}\t${message}`);
  }

  private out(agent: string, text: string): void {
    this.rec.outputs[agent] += this.input.mode === 'automation' ? text + text : text;
  }

  private think(s: AgentSim, text: string): void {
    const parts = chunks(text);
    parts.forEach((part, i) => {
      this.now += this.input.rng.int(20 * MILLI, 35 * MILLI);
      this.jsonl('thinking', s.id, s.display, { content: part, done: false }, 'thinking');
      this.out(s.id, i === 0 ? `${part}🧠 [Reasoning Started]\n${part}\n` : part);
    });
    this.jsonl('thinking', s.id, s.display, { content: '', done: true });
    this.rec.outputs[s.id] += '\n🧠 [Reasoning Complete]\n';
  }

  private say(s: AgentSim, text: string): void {
    this.now += this.input.rng.int(1 * MILLI, 30 * MILLI);
    this.jsonl('text', s.id, s.display, { content: text }, 'text');
    this.out(s.id, text);
  }

  private bill(s: AgentSim, kind: CallKind): TokenDelta {
    const tokens = drawTokens(this.input.rng, this.input.model, kind, s.seen.length);
    this.rec.usage[s.id] = addTokens(this.rec.usage[s.id] ?? zeroTokens(), tokens);
    const timeCms = this.input.rng.int(30_000, 150_000);
    this.rec.apiCalls.push({ agent: s.id, round: s.round, timeCms, ttftCms: Math.floor(timeCms * (0.6 + this.input.rng.next() * 0.15)) });
    if (this.input.model !== 'openai/gpt-4o-mini' && this.input.model !== 'openai/gpt-4.1-mini') {
      this.log(`[TokenCostCalculator] No pricing found for ChatCompletion/${this.input.model}`);
    }
    return tokens;
  }

  private seenAnswers(labels: string[]): { label: string; text: string }[] {
    const byLabel = new Map(this.rec.answers.map((a) => [a.label, a.text]));
    return labels.map((label) => ({ label, text: byLabel.get(label) ?? '' }));
  }

  private anonIds(): string[] {
    return this.rec.sortedAgents.map((_, i) => `agent${i + 1}`);
  }

  // ---- lifecycle -----------------------------------------------------------------------

  private begin(): void {
    const dir = this.input.logDirRel;
    this.log(`Logging enabled - logging INFO+ to file: ${dir}/massgen.log`);
    this.log(`Events log: ${dir}/events.jsonl`);
    this.log(`Logging enabled - logging INFO+ to file: ${dir}/massgen.log`);
    this.log(`Events log: ${dir}/events.jsonl`);
    if (this.input.turn === 1 && this.input.attempt === 1) {
      // massgen/cli.py names the new session before the first turn (turn 1's start is the session's).
      const id = sessionId(this.input.start);
      this.log(`📝 Created session for ${this.input.mode === 'interactive' ? 'interactive' : 'single-question'} mode: ${id}`);
      this.log(`📝 Registered new session in registry: ${id}`);
    }
    this.log(`Saved execution metadata to: ${dir}/execution_metadata.yaml`);
    this.log(`[CoordinationUI] coordinate() method CALLED - question: ${this.input.question.slice(0, 50)}...`);
    const started = `Started with agents: [${this.input.agents.map((a) => `'${a}'`).join(', ')}]`;
    this.now -= 5 * MILLI;
    this.coord('session_start', null, started, {}, 0);
    this.now = this.input.start;
    this.rec.coordEvents.push({ at: this.now, type: 'session_start', agent: null, details: started, context: { iteration: 0, round: 0 } });
    for (const message of [
      'Initializing coordination...',
      `Preparing ${this.input.agents.length} agent environments...`,
      'Agents working on task...',
    ]) {
      this.jsonl('system_status', null, 0, { message });
    }
    this.iterations(1);
    for (const id of this.input.agents) {
      const s = this.agent(id);
      this.advance(5, 600);
      this.log(`[Orchestrator] Agent ${id} starting execution loop...`);
      this.log(`[Orchestrator] Agent ${id} sees no existing answers`);
      this.jsonl('round_start', id, 0, {});
      this.jsonl('evaluation_criteria_set', null, 0, criteriaEventData());
      s.roundStarts = 1;
      this.coord('context_received', id, 'Received context with 0 answers', {
        available_answers: [],
        available_answer_labels: [],
        answer_count: 0,
        has_conversation_history: this.input.hasHistory,
      });
      this.coord('status_change', id, 'Changed to status: streaming', {});
      s.roundStart = this.now;
      this.log(`[Orchestrator] Agent ${id} workflow enforcement attempt 1/3`);
    }
  }

  private refresh(s: AgentSim): void {
    const n = s.roundStarts++;
    this.jsonl('round_start', s.id, n, {});
    this.jsonl('evaluation_criteria_set', null, 0, criteriaEventData());
    s.seen = this.labels;
    this.coord('context_received', s.id, `Received context with ${s.seen.length} answers`, {
      available_answers: s.seen.map((l) => l.split('.')[0] ?? l),
      available_answer_labels: s.seen,
      answer_count: s.seen.length,
      has_conversation_history: this.input.hasHistory,
    });
    this.coord('status_change', s.id, 'Changed to status: streaming', {});
    this.jsonl('context_received', s.id, n, { context_labels: s.seen });
    this.jsonl('agent_restart', s.id, n + 1, { restart_round: n + 1, restart_reason: 'new answer' });
    s.display = n + 1;
    s.roundStart = this.now;
    s.retry = 0;
    this.log(`[Orchestrator] Agent ${s.id} restarting with ${s.seen.length} answers: ${s.seen.join(', ')}`);
  }

  private step(step: Step): void {
    switch (step.kind) {
      case 'answer':
        return this.answer(this.agent(step.agent));
      case 'vote':
        return this.vote(this.agent(step.agent), this.agent(step.target));
      case 'vote-ignored':
        return this.voteIgnored(this.agent(step.agent), this.agent(step.target));
      case 'enforce':
        return this.enforce(this.agent(step.agent), step.reason);
      case 'present':
        return this.present();
      case 'restart-orchestration':
        return this.restartOrchestration(step.reason);
      case 'kill':
        return this.kill();
    }
  }

  private answer(s: AgentSim): void {
    if (s.answers > 0 && this.stale(s)) this.refresh(s);
    if (s.answers >= 3) throw new ScenarioError(`${s.id} already has 3 answers (max_new_answers_per_agent: 3)`);
    this.advance(200, 900);
    const text = answerText(this.input.rng, s.id, s.answers + 1, this.input.question);
    this.think(s, 'Drafting an answer.');
    this.say(s, 'Here is my answer.');
    this.advance(50, 150);
    this.iterations(this.input.rng.int(0, 1));
    const label = `${s.anon}.${s.answers + 1}`;
    const tokens = this.bill(s, s.answers === 0 ? 'initial_answer' : 'voting');
    const answer: AnswerRecord = {
      agent: s.id,
      label,
      number: s.answers + 1,
      round: s.round,
      iteration: this.iteration,
      at: this.bump(),
      stamp: snapshotStamp(this.now),
      text,
      seen: s.seen,
      context: roundContext(this.input.question, this.seenAnswers(s.seen), this.anonIds()),
      trace: answerTrace(s.id, this.input.model, s.roundStart, 'Drafting an answer.', text),
    };
    this.rec.answers.push(answer);
    this.rec.rounds.push({
      agent: s.id,
      roundNumber: s.round,
      roundType: s.answers === 0 ? 'initial_answer' : 'voting',
      outcome: 'answer',
      tokens,
      start: s.roundStart,
      end: this.now,
    });
    this.coord('new_answer', s.id, `Provided answer ${label}`, { label });
    this.jsonl('answer_submitted', s.id, s.display, {
      content: pyPrefix(text, 500),
      answer_number: s.answers + 1,
      answer_label: label,
      workspace_path: null,
    });
    this.log(`[Orchestrator._save_agent_snapshot] Saved answer to ${this.input.logDirRel}/${s.id}/${answer.stamp}/answer.txt`);
    this.log(`Agent answer: ${s.id} -> ${label}`);
    this.coord('restart_triggered', s.id, `Triggered restart affecting ${this.input.agents.length} agents`, {
      affected_agents: this.input.agents,
      triggering_agent: s.id,
    });
    s.round++;
    s.answers++;
    s.lastActivity = answer.at;
    this.latest.delete(s.id);
    this.latest.set(s.id, answer);
    for (const other of this.st.values()) other.hasVoted = false;
    this.coord('restart_completed', s.id, `Completed restart - now in round ${s.round}`, { agent_round: s.round });
    this.coord('status_change', s.id, 'Changed to status: answered', {});
    this.iterations(1);
    this.refresh(s);
  }

  private targetLabel(s: AgentSim, target: AgentSim): string {
    const label = [...s.seen].reverse().find((l) => l.startsWith(`${target.anon}.`));
    if (!label)
      throw new ScenarioError(`${s.id} cannot vote for ${target.id}: no answer of ${target.id} in its context [${s.seen.join(', ')}]`);
    return label;
  }

  private comparing(s: AgentSim, label: string): string {
    const anons = [...new Set(s.seen.map((l) => l.split('.')[0]))].sort();
    return `Comparing ${anons.join(', ')}; ${label} is the most complete.`;
  }

  private vote(s: AgentSim, target: AgentSim): void {
    if (this.stale(s)) this.refresh(s);
    const targetLabel = this.targetLabel(s, target);
    const reason = voteReason(targetLabel);
    this.advance(200, 900);
    const reasoning = this.comparing(s, targetLabel);
    this.think(s, reasoning);
    this.say(s, `I reviewed the ${s.seen.length} current answers.`);
    this.advance(30, 90);
    this.iterations(this.input.rng.int(0, 1));
    const tokens = this.bill(s, 'voting');
    s.votes++;
    const vote: VoteRecord = {
      agent: s.id,
      label: `${s.anon}.vote${s.votes}`,
      target: target.id,
      targetLabel,
      reason,
      round: s.round,
      trackerRound: this.maxRound,
      iteration: this.iteration,
      at: this.bump(),
      stamp: snapshotStamp(this.now),
      seen: s.seen,
      context: roundContext(this.input.question, this.seenAnswers(s.seen), this.anonIds()),
      trace: voteTrace(s.id, this.input.model, s.roundStart, reasoning, { anonTarget: target.anon, targetLabel, reason, options: s.seen }),
    };
    this.rec.votes.push(vote);
    this.rec.rounds.push({
      agent: s.id,
      roundNumber: s.round,
      roundType: 'voting',
      outcome: 'vote',
      tokens,
      start: s.roundStart,
      end: this.now,
    });
    this.coord('vote_cast', s.id, `Voted for ${targetLabel}`, {
      voted_for: target.id,
      voted_for_label: targetLabel,
      reason,
      available_answers: s.seen,
    });
    this.jsonl('vote', s.id, s.display, { target_id: target.id, reason, vote_label: null, voted_for_label: null });
    this.log(`[Orchestrator._save_agent_snapshot] Saved vote to ${this.input.logDirRel}/${s.id}/${vote.stamp}/vote.json`);
    this.log(`Agent vote: ${s.id} -> ${targetLabel}`);
    this.coord('status_change', s.id, 'Changed to status: voted', {});
    this.iterations(1);
    s.hasVoted = true;
    s.firstVote ??= vote;
    s.currentVote = vote;
    s.retry = 0;
  }

  private voteIgnored(s: AgentSim, target: AgentSim): void {
    if (!this.stale(s))
      throw new ScenarioError(`${s.id}'s context is current, so its vote cannot be ignored; put an answer by another agent first`);
    const targetLabel = this.targetLabel(s, target);
    this.advance(200, 900);
    this.think(s, this.comparing(s, targetLabel));
    this.say(s, `I reviewed the ${s.seen.length} current answers.`);
    this.advance(30, 90);
    this.iterations(this.input.rng.int(0, 1));
    this.bill(s, 'interrupted');
    this.say(s, `🔄 Vote for [${target.id}] ignored (reason: ${voteReason(targetLabel)}) - restarting due to new answers`);
    this.rec.ignored.push({ agent: s.id, target: target.id, at: this.now, iteration: this.iteration, round: s.round });
    this.coord('vote_ignored', s.id, `VOTE_IGNORED: Voted for ${target.id} but ignored due to restart`, {});
    this.log(`[Orchestrator] Vote from ${s.id} ignored - restart pending`, 'WARNING');
    this.iterations(1);
    this.refresh(s);
  }

  private enforce(s: AgentSim, reason: ReasonCode): void {
    if (s.answers > 0 && this.stale(s)) this.refresh(s);
    if (reason === 'vote_no_answers' && s.seen.length > 0) throw new ScenarioError(`vote_no_answers needs ${s.id} to see no answers`);
    const attempt = s.retry + 1;
    if (attempt > 3) throw new ScenarioError(`${s.id} exceeds max_attempts 3 in round ${s.round}`);
    s.retry = attempt;
    this.advance(200, 700);
    const shape = enforcementShape(reason, {
      question: this.input.question,
      anonIds: this.anonIds(),
      anonSelf: s.anon,
      draft: answerText(this.input.rng, s.id, s.answers + 1, this.input.question),
    });
    for (const text of shape.streamed) this.say(s, text);
    this.bill(s, 'interrupted');
    const push = (code: ReasonCode, toolCalls: string[], message: string): void => {
      this.bump();
      this.rec.enforcement.push({
        agent: s.id,
        round: s.round,
        attempt,
        reason: code,
        toolCalls,
        errorMessage: message,
        bufferPreview: shape.buffer === null ? null : pyPrefix(shape.buffer, 500),
        bufferChars: shape.buffer === null ? 0 : pyLen(shape.buffer),
        at: this.now,
      });
    };
    push(reason, shape.toolCalls, shape.errorMessage);
    if (reason === 'api_error') {
      this.log(`[Orchestrator] API error for ${s.id}: ${shape.errorMessage}`, 'ERROR');
      push('no_tool_calls', [], MUST_USE_WORKFLOW);
    }
    const retryMessage = reason === 'api_error' ? MUST_USE_WORKFLOW : shape.errorMessage;
    this.say(s, `❌ Retry (${attempt}/3): ${retryMessage}`);
    this.log(`[Orchestrator] Agent ${s.id} workflow enforcement attempt ${attempt + 1}/3`);
  }

  private present(): void {
    const pending = [...this.st.values()].filter((s) => !s.hasVoted || this.stale(s)).map((s) => s.id);
    if (pending.length > 0) throw new ScenarioError(`cannot present: ${pending.join(', ')} must (re-)vote on the current answers first`);
    const counts = new Map<string, number>();
    for (const s of this.st.values()) {
      const target = s.currentVote?.target;
      if (target) counts.set(target, (counts.get(target) ?? 0) + 1);
    }
    const best = Math.max(...counts.values());
    const leaders = this.input.agents.filter((a) => counts.get(a) === best);
    const winner = this.agent(leaders[0] ?? '');
    const isTie = leaders.length > 1;
    const voteCounts = Object.fromEntries(this.input.agents.filter((a) => counts.has(a)).map((a) => [a, counts.get(a) ?? 0]));
    const currentVotes = this.input.agents.map((a) => this.agent(a).currentVote).filter((v): v is VoteRecord => v !== null);
    const summary = voteSummary(currentVotes.filter((v) => v.target === winner.id));
    const latest = [...this.latest.values()];
    const answersForContext = Object.fromEntries(latest.map((a) => [a.label, a.text]));
    const allLabels = latest.map((a) => a.label);
    this.advance(5, 30);
    this.jsonl('status', winner.id, winner.display, { message: `Voting complete - selected agent: ${winner.id}`, level: 'info' });
    this.rec.outputs[winner.id] += `\n[${this.hms()}] Voting complete - selected agent: ${winner.id}\n`;
    this.jsonl('status', winner.id, winner.display, { message: 'Presenting final coordinated answer', level: 'info' });
    this.rec.outputs[winner.id] += `\n[${this.hms()}] Presenting final coordinated answer\n`;
    const finalRound = winner.round + 1;
    this.coord('status_change', winner.id, 'Changed to status: streaming', {}, finalRound);
    this.coord(
      'final_round_start',
      winner.id,
      `Starting final presentation round ${finalRound}`,
      { round_type: 'final', final_round: finalRound },
      finalRound,
    );
    for (const s of this.st.values()) if (s !== winner) this.coord('status_change', s.id, 'Changed to status: completed', {});
    this.coord(
      'final_agent_selected',
      winner.id,
      'Selected as final presenter',
      {
        vote_summary: summary,
        all_answers: allLabels,
        answers_for_context: answersForContext,
      },
      finalRound,
    );
    this.log(`[Orchestrator] Final presentation by ${winner.id} (votes: ${JSON.stringify(voteCounts)})`);
    const winnerAnswer = this.latest.get(winner.id);
    if (!winnerAnswer) throw new ScenarioError(`winner ${winner.id} has no answer`);
    const presentStart = this.now;
    this.jsonl('final_presentation_start', winner.id, winner.display, {
      vote_counts: voteCounts,
      answer_labels: { [winner.id]: `A${winner.anon.slice(5)}.${winnerAnswer.number}` },
      is_tie: isTie,
    });
    this.advance(150, 300);
    const reasoning = 'Presenting the selected answer as the final deliverable.';
    this.think(winner, reasoning);
    this.jsonl('final_presentation_chunk', winner.id, winner.display, { content: 'Presenting the final' });
    this.say(winner, 'Presenting the final answer.');
    this.jsonl('final_presentation_chunk', winner.id, winner.display, { content: ' answer.' });
    const text = finalText(winner.id, winnerAnswer.text);
    this.out(winner.id, text);
    this.advance(50, 200);
    this.iterations(this.input.rng.int(2, 4));
    const tokens = this.bill(winner, 'presentation');
    this.rec.rounds.push({
      agent: winner.id,
      roundNumber: finalRound,
      roundType: 'presentation',
      outcome: 'presentation',
      tokens,
      start: presentStart,
      end: this.now,
    });
    const label = `${winner.anon}.final`;
    this.coord(
      'final_answer',
      winner.id,
      `Presented final answer ${label}`,
      {
        label,
        vote_summary: summary,
        all_answers: allLabels,
        answers_for_context: answersForContext,
      },
      finalRound,
    );
    winner.round = finalRound;
    this.rec.final = {
      winner: winner.id,
      label,
      text,
      at: this.now,
      iteration: this.iteration,
      round: finalRound,
      voteCounts,
      voteSummary: summary,
      context: finalContext({
        question: this.input.question,
        winner: winner.id,
        summary,
        latest,
        votes: currentVotes,
        voteCounts,
        isTie,
        agentMapping: Object.fromEntries(this.rec.sortedAgents.map((a, i) => [`agent${i + 1}`, a])),
      }),
      trace: answerTrace(winner.id, this.input.model, presentStart, reasoning, text),
    };
    const seconds = (this.now - this.input.start) / 1e6;
    this.coord('session_end', null, `Session completed in ${seconds.toFixed(1)}s`, {});
    this.rec.end = this.now;
    this.jsonl('final_answer', winner.id, winner.display, { content: text });
    this.jsonl('final_presentation_end', winner.id, winner.display, {});
    this.jsonl('answer_locked', winner.id, winner.display, {});
    this.rec.statusAt = this.bump();
    this.log(`[Orchestrator] Saved coordination logs to ${this.input.logDirRel}`);
  }

  private hms(): string {
    return new Date(Math.floor(this.now / 1000)).toISOString().slice(11, 19);
  }

  private restartOrchestration(reason: string): void {
    const final = this.rec.final;
    if (!final) throw new ScenarioError('restart-orchestration must follow present');
    this.advance(300, 900);
    const winner = this.agent(final.winner);
    this.jsonl('post_evaluation', winner.id, winner.display, { phase: 'start', content: '', winner: winner.id });
    this.jsonl('post_evaluation', winner.id, winner.display, {
      phase: 'content',
      content: `The final answer misses part of the request: ${reason}`,
      winner: winner.id,
    });
    this.jsonl('restart_banner', null, 0, {
      reason,
      instructions: 'Address the missing part of the request before presenting again.',
      attempt: this.input.attempt + 1,
      max_attempts: 3,
    });
    this.log(`[Orchestrator] Post-evaluation requested orchestration restart: ${reason}`, 'WARNING');
    this.log(`Orchestration restart ${this.input.attempt}/2: starting attempt ${this.input.attempt + 1}`);
    this.rec.outcome = 'restarted';
    this.rec.restartReason = reason;
  }

  private kill(): void {
    const active = [...this.st.values()].find((s) => !s.hasVoted);
    this.rec.statusAt = this.bump();
    this.rec.activeAgent = active?.id ?? null;
    if (active) {
      if (this.stale(active) && active.answers > 0) this.refresh(active);
      this.advance(300, 800);
      const text = `Comparing ${[...new Set(active.seen.map((l) => l.split('.')[0]))].sort().join(', ')}; still reading`;
      for (const part of chunks(text)) {
        this.now += this.input.rng.int(20 * MILLI, 35 * MILLI);
        this.jsonl('thinking', active.id, active.display, { content: part, done: false }, 'thinking');
      }
    }
    this.rec.outcome = 'killed';
    this.rec.end = this.now;
  }

  private finish(): void {
    if (this.rec.outcome !== 'killed' && !this.rec.final) {
      throw new ScenarioError('an attempt must end with present (optionally followed by restart-orchestration) or kill');
    }
    if (this.rec.outcome !== 'killed' && this.rec.outcome !== 'restarted') this.rec.end = Math.max(this.rec.end, this.now);
    if (this.rec.outcome === 'restarted') this.rec.end = this.now;
    for (const s of this.st.values()) {
      const latest = this.latest.get(s.id);
      const state: AgentFinalState = {
        status: s.hasVoted ? 'voted' : s.answers > 0 ? 'answered' : 'waiting',
        answerCount: s.answers,
        latestLabel: latest?.label ?? null,
        firstVote: s.firstVote,
        round: s.round,
        lastActivity: s.lastActivity,
        roundStart: s.roundStart,
      };
      this.rec.agentState[s.id] = state;
    }
  }
}
