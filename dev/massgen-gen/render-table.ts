// coordination_table.txt (create_coordination_table.py), rebuilt from the coordination events.
// Human-oriented; widths count code points like Python str.center, so emoji rows look ragged.
import type { AttemptRecord, CoordEvent } from './model.ts';

const LEGEND =
  "\nMulti-Agent Coordination Events Log\n==================================================\n\n📋 EVENT SYMBOLS:\n  💭 Started streaming       - Agent begins thinking/processing\n  ✨ NEW ANSWER              - Agent provides a labeled answer\n  🗳️  VOTE                  - Agent votes for an answer\n  💭 Reason                  - Reasoning behind the vote\n  👁️  Preview               - Content of the answer\n  📨 UPDATE RECEIVED         - Agent receives update mid-stream (no restart)\n  🔁 RESTART TRIGGERED       - Agent requests to restart\n  ✅ RESTART COMPLETED       - Agent finishes restart\n  🎯 FINAL ANSWER            - Winner provides final response\n  🏆 Winner selected         - System announces winner\n\n📊 STATUS SYMBOLS:\n  💭 (streaming)             - Currently thinking/processing\n  ⏳ (waiting)               - Idle, waiting for turn\n  ✅ (answered)              - Has provided an answer\n  ✅ (voted)                 - Has cast a vote\n  ✅ (completed)             - Task completed\n  🎯 (final answer given)    - Winner completed final answer\n\n📖 TERMS:\n  Context       - Available answer options agent can see\n  Restart       - Agent starts over (clears memory)\n  Event         - Chronological action in the coordination\n  Answer Labels - Each answer gets a unique ID (agent1.1, agent2.1, etc.)\n                    Format: agent{N}.{attempt} where N=agent number, attempt=new answer number\n                    Example: agent1.1 = Agent1's 1st answer, agent2.1 = Agent2's 1st answer\n  agent1.final  - Special label for the winner's final answer\n\n";

const CELL = 40;
const cp = (s: string): number => [...s].length;

function center(text: string, width: number): string {
  const t = cp(text) > width ? `${[...text].slice(0, width - 3).join('')}...` : text;
  const marg = width - cp(t);
  if (marg <= 0) return t;
  const left = Math.floor(marg / 2) + (marg & width & 1);
  return ' '.repeat(left) + t + ' '.repeat(marg - left);
}

function fit(text: string): string {
  return cp(text) > CELL ? `${[...text].slice(0, CELL - 3).join('')}...` : text;
}

const STATUS_TEXT: Record<string, string> = {
  streaming: '🔄 (streaming)',
  waiting: '⏳ (waiting)',
  answered: '✅ (answered)',
  voted: '✅ (voted)',
  completed: '✅ (completed)',
};

export function renderCoordinationTable(rec: AttemptRecord): string {
  const agents = rec.sortedAgents;
  const n = agents.length;
  const inner = 11 + (CELL + 1) * n - 2;
  const rule = (ch: string): string => `|${ch.repeat(10)}+${`${ch.repeat(CELL)}+`.repeat(n)}`;
  const border = `+${'-'.repeat(inner)}+`;
  const lines: string[] = [border];
  lines.push(`|   Event  |${agents.map((a, i) => center(`Agent ${i + 1} (${a})`, CELL)).join('|')}|`);
  lines.push(rule('-'));
  lines.push(`|   USER   |${center(rec.question, inner - 11)}|`);
  lines.push(rule('='));
  const status = new Map(agents.map((a) => [a, 'waiting']));
  const restarts = new Map(agents.map((a) => [a, 0]));
  const answers = new Map(agents.map((a) => [a, 0]));
  const texts = new Map(rec.answers.map((a) => [a.label, a.text]));
  let eventNo = 0;
  const row = (actor: string, first: string, second: string): void => {
    eventNo++;
    const top = agents.map((a) => center(a === actor ? fit(first) : (STATUS_TEXT[status.get(a) ?? 'waiting'] ?? ''), CELL));
    const bottom = agents.map((a) => center(a === actor ? fit(second) : '', CELL));
    lines.push(`|${`E${eventNo}`.padStart(7)}   |${top.join('|')}|`);
    if (second) lines.push(`|${' '.repeat(10)}|${bottom.join('|')}|`);
    lines.push(rule('-'));
  };
  const banner = (text: string): void => {
    eventNo++;
    lines.push(rule('-'), `|${center(text, inner)}|`, rule('-'));
  };
  const handle = (e: CoordEvent): void => {
    const a = e.agent ?? '';
    const num = agents.indexOf(a) + 1;
    const ctx = e.context;
    switch (e.type) {
      case 'status_change':
        status.set(a, e.details.replace('Changed to status: ', ''));
        return;
      case 'context_received':
        return row(a, `📋 Context: [${(ctx.available_answer_labels as string[]).join(', ')}]`, '💭 Started streaming');
      case 'new_answer':
        answers.set(a, (answers.get(a) ?? 0) + 1);
        return row(a, `✨ NEW ANSWER: ${String(ctx.label)}`, `👁️  Preview: ${texts.get(String(ctx.label)) ?? ''}`);
      case 'restart_triggered':
        return banner(`🔁 Agent ${num} RESTART TRIGGERED`);
      case 'restart_completed':
        restarts.set(a, (restarts.get(a) ?? 0) + 1);
        return row(a, `✅ RESTART COMPLETED (Restart ${restarts.get(a)})`, '');
      case 'vote_cast':
        return row(a, `🗳️  VOTE: ${String(ctx.voted_for_label)}`, `💭 Reason: ${String(ctx.reason)}`);
      case 'vote_ignored':
        return row(a, '🔄 VOTE IGNORED (restart)', '');
      case 'final_agent_selected':
        return banner(`🏆 Agent ${num} selected as winner`);
      case 'final_answer':
        return row(a, `🎯 FINAL ANSWER: ${String(ctx.label)}`, `👁️  Preview: ${rec.final?.text.replace(/^## .*\n\n/, '') ?? ''}`);
      default:
        return;
    }
  };
  for (const e of rec.coordEvents) handle(e);
  const winner = rec.final?.winner ?? null;
  const currentVoters = new Set(rec.final ? rec.votes.map((v) => v.agent) : []);
  const plural = (k: number, word: string): string => `${k} ${word}${k === 1 ? '' : 's'}`;
  lines.push(rule('='));
  lines.push(`|  SUMMARY |${agents.map((_, i) => center(`Agent ${i + 1}`, CELL)).join('|')}|`, rule('-'));
  lines.push(`| Answers  |${agents.map((a) => center(plural(answers.get(a) ?? 0, 'answer'), CELL)).join('|')}|`);
  lines.push(`| Votes    |${agents.map((a) => center(plural(currentVoters.has(a) ? 1 : 0, 'vote'), CELL)).join('|')}|`);
  lines.push(`| Restarts |${agents.map((a) => center(plural(restarts.get(a) ?? 0, 'restart'), CELL)).join('|')}|`);
  lines.push(`| Status   |${agents.map((a) => center(a === winner ? '🏆 Winner' : '✅ Completed', CELL)).join('|')}|`, rule('-'));
  const totalRestarts = [...restarts.values()].reduce((x, y) => x + y, 0);
  const cap = winner ? winner.replaceAll('_', '') : '';
  const selected = winner ? ` → ${cap.charAt(0).toUpperCase()}${cap.slice(1).toLowerCase()} selected` : '';
  lines.push(
    `| TOTALS   |${center(`${plural(rec.answers.length, 'answer')}, ${plural(currentVoters.size, 'vote')}, ${plural(totalRestarts, 'restart')}${selected}`, inner - 11)}|`,
  );
  lines.push(border);
  return `${LEGEND}${lines.join('\n')}`;
}
