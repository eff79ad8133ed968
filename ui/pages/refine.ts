/// <reference lib="dom" />
// Refine: the sessions, and one session: scores per criterion per round (a chart and a criterion ×
// judge × round matrix, disagreement between judges highlighted), each judge's verdict and critique,
// the consensus votes (stale ones marked), next tasks, and cost per round with what the cache saved.
import { getJson } from '../api.ts';
import type { App, View } from '../app.ts';
import { throttle } from '../app.ts';
import { groupedBars, lineChart } from '../charts.ts';
import { chip, empty, errorBox, h, link, replace, route, section, table, usd } from '../dom.ts';
import { renderMarkdown } from '../markdown.ts';

interface Totals {
  calls: number;
  cached_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  original_cost_usd: number;
}

interface Summary {
  session: string;
  criteria: Array<{ id: string; text: string; category: string }>;
  rounds: Array<{
    round: number;
    verdict: string;
    status: string;
    winner: string | null;
    forced?: boolean;
    forced_reason?: string;
    scores: Record<string, number>;
    judges: Array<{ name: string; verdict: string | null; status: string; scores: Record<string, number>; reason?: string }>;
    next_tasks: Array<{ id: string; description: string; priority?: string | number }>;
    usage: Totals;
  }>;
  stopped: { reason: string; round: number };
  final_verdict: string | null;
  next_tasks: Array<{ id: string; description: string; priority?: string | number; relates_to?: string[] }>;
  usage: { total: Totals; this_run: Totals };
  warnings: string[];
}

interface Vote {
  voter: string;
  target: string;
  reason: string;
  round: number;
}

interface Consensus {
  mode: string;
  winner: { judge: string } | null;
  forced: boolean;
  forced_reason?: string;
  decided_by?: string;
  source?: { judge: string; round: number; step: number } | null;
  decision?: string;
  votes: Vote[];
  stale_votes: Vote[];
  tally?: Record<string, number>;
  rounds: Array<{ round: number }>;
  answers?: Array<{ judge: string; round: number; step: number; verdict: string; status: string; scores: Record<string, number> }>;
}

interface ShownFile {
  path: string;
  bytes: number;
  text: string | null;
  truncated: boolean;
  state: 'as-scored' | 'changed' | 'missing' | 'binary' | 'unknown';
}

interface SessionData {
  session: string;
  deliverable: { round: number; files: ShownFile[] } | null;
  summary: Summary | null;
  criteria: { criteria: Array<{ id: string; text: string; category: string }> } | null;
  regression: { status: string; result?: string } | null;
  rounds: Array<{
    round: number;
    consensus: Consensus | null;
    critique: string | null;
    judges: Array<{
      name: string;
      verdict: {
        verdict: string;
        scores: Record<string, number>;
        status: string;
        degraded_reason?: string;
        judge?: { backend: string; model?: string };
      } | null;
      critique: string | null;
    }>;
  }>;
}

export function refineListView(_app: App): View {
  const box = h('div', null, empty('Loading sessions…'));
  const el = h('div', { class: 'page' }, h('h1', null, 'Refine sessions'), box);
  const load = async (): Promise<void> => {
    const { sessions } = await getJson<{
      sessions: Array<{
        session: string;
        rounds: number;
        finalVerdict: string | null;
        stopped: { reason: string } | null;
        criteria: number | null;
        costUsd: number | null;
        originalCostUsd: number | null;
      }>;
    }>('/api/refine/sessions');
    replace(
      box,
      sessions.length
        ? table(
            ['session', 'rounds', 'verdict', 'stopped', 'criteria', 'cost (this run)', 'cost when made'],
            sessions.map((s) => [
              link(route('refine', s.session), s.session),
              String(s.rounds),
              s.finalVerdict ? chip(s.finalVerdict === 'converged' ? 'up-to-date' : 'stale', s.finalVerdict) : '–',
              s.stopped?.reason ?? '–',
              s.criteria === null ? '–' : String(s.criteria),
              usd(s.costUsd),
              usd(s.originalCostUsd),
            ]),
          )
        : empty('No refine session yet (just refine runs the bundled example).'),
    );
  };
  void load().catch((e: Error) => replace(box, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 1000);
  return { el, title: 'Refine', onLive: (m) => m.kind === 'run-event' && m.event.type === 'run-end' && refresh() };
}

/** Judges disagree on a criterion in a round when their scores are 3 or more apart. */
const DISAGREEMENT = 3;

/** A judge's finding on one criterion, from its critique's `- **E2**: ...` line. */
export function findingFor(critique: string | null, criterion: string): string | null {
  if (!critique) return null;
  const line = critique.split('\n').find((l) => new RegExp(`^\\s*[-*]\\s*\\*\\*${criterion}\\*\\*\\s*[:\\-\u2013]`).test(l));
  return line ? line.replace(/^\s*[-*]\s*\*\*[^*]+\*\*\s*[:\-\u2013]\s*/, '') : null;
}

function matrix(app: App, data: SessionData, criteria: Array<{ id: string; text: string }>): HTMLElement {
  const rounds = data.rounds;
  const judges = [...new Set(rounds.flatMap((r) => r.judges.map((j) => j.name)))];
  const detail = h('div', { class: 'cell-detail' });
  const cells = new Map<string, HTMLElement>();
  const show = (key: string | null): void => {
    for (const [k, td] of cells) td.classList.toggle('focused', k === key);
    const [round, judge, criterion] = (key ?? '').split('|');
    const r = rounds.find((x) => String(x.round) === round);
    const j = r?.judges.find((x) => x.name === judge);
    if (!key || !r || !j || !criterion) return replace(detail);
    const score = j.verdict?.scores?.[criterion];
    replace(
      detail,
      h(
        'p',
        null,
        h('strong', null, `Round ${round} · ${judge} · ${criterion}: ${score ?? '–'}`),
        ' ',
        findingFor(j.critique, criterion) ?? h('span', { class: 'muted' }, '(no finding on this criterion in the critique)'),
      ),
    );
  };
  const head = h(
    'tr',
    null,
    h('th', null, 'criterion'),
    rounds.flatMap((r) => judges.map((j) => h('th', { title: j }, `R${r.round} ${j}`))),
  );
  const body = criteria.map((c) =>
    h(
      'tr',
      null,
      h('th', { title: c.text }, c.id),
      rounds.flatMap((r) => {
        const scores = judges.map((j) => r.judges.find((x) => x.name === j)?.verdict?.scores?.[c.id]);
        const known = scores.filter((s): s is number => typeof s === 'number');
        const split = known.length > 1 && Math.max(...known) - Math.min(...known) >= DISAGREEMENT;
        return scores.map((s, i) => {
          const judge = judges[i] as string;
          const key = `${r.round}|${judge}|${c.id}`;
          const finding = findingFor(r.judges.find((x) => x.name === judge)?.critique ?? null, c.id);
          const td = h(
            'td',
            {
              class: `score score-${s ?? 'none'}${split ? ' disagree' : ''}`,
              title: `${c.id} · round ${r.round} · ${judge}${split ? ' · judges disagree' : ''}${finding ? `\n${finding}` : ''}`,
              dataset: { cell: key },
            },
            h(
              'a',
              {
                href: `${route('refine', data.session)}?cell=${encodeURIComponent(key)}`,
                on: {
                  click: (e) => {
                    e.preventDefault();
                    app.setQuery({ cell: key });
                    show(key);
                  },
                },
              },
              s === undefined ? '–' : String(s),
            ),
          );
          cells.set(key, td);
          return td;
        });
      }),
    ),
  );
  const box = h(
    'div',
    { class: 'matrix-box' },
    h('table', { class: 'grid matrix' }, h('thead', null, head), h('tbody', null, body)),
    h(
      'p',
      { class: 'muted small' },
      `Cells outlined in red: judges ${DISAGREEMENT} or more points apart on that criterion in that round. Click a score for the judge's finding (each cell has its own address).`,
    ),
    detail,
  );
  show(app.query.get('cell'));
  return box;
}

/** The newest round: each judge's score per criterion, as grouped bars (criteria are categories, not a scale). */
function judgesChart(data: SessionData, criteria: Array<{ id: string; text: string }>): HTMLElement | null {
  const last = data.rounds.at(-1);
  const judges = last?.judges.filter((j) => j.verdict) ?? [];
  if (!last || judges.length === 0 || criteria.length === 0) return null;
  return groupedBars({
    title: `Round ${last.round}: each judge's score per criterion`,
    groups: criteria.map((c) => ({ label: c.id, title: c.text })),
    series: judges.map((j) => ({ label: j.name, values: criteria.map((c) => j.verdict?.scores[c.id] ?? null) })),
    max: 10,
    yLabel: 'score (1-10)',
  });
}

const FILE_STATE: Record<ShownFile['state'], string> = {
  'as-scored': 'as scored',
  changed: 'changed since it was scored',
  missing: 'not found in the project',
  binary: 'binary: not shown',
  unknown: 'too large to show',
};

/** One deliverable file: Markdown rendered through marked and DOMPurify, anything else as text in a <pre>. */
async function deliverableFile(file: ShownFile): Promise<HTMLElement> {
  const body = h('div', { class: 'deliverable-body' });
  if (file.text === null) body.appendChild(empty(FILE_STATE[file.state]));
  else if (/\.(md|markdown)$/i.test(file.path)) await renderMarkdown(file.text, body);
  else body.appendChild(h('pre', { class: 'code' }, file.text));
  return h(
    'div',
    { class: 'deliverable-file', dataset: { path: file.path } },
    h(
      'h3',
      null,
      file.path,
      ' ',
      chip(file.state === 'as-scored' ? 'up-to-date' : 'stale', FILE_STATE[file.state]),
      file.truncated && file.text !== null ? h('span', { class: 'muted small' }, ` (first part of ${file.bytes} bytes)`) : null,
    ),
    body,
  );
}

/** The scored round's per-criterion scores (consensus and each judge) beside the deliverable it scored. */
async function deliverableSection(data: SessionData, criteria: Array<{ id: string; text: string }>): Promise<HTMLElement | null> {
  const shown = data.deliverable;
  if (!shown) return null;
  const round = data.rounds.find((r) => r.round === shown.round);
  const consensusScores = data.summary?.rounds.find((r) => r.round === shown.round)?.scores ?? {};
  const judges = round?.judges.filter((j) => j.verdict) ?? [];
  const scores = table(
    ['criterion', 'consensus', ...judges.map((j) => j.name)],
    criteria.map((c) => [
      h('span', { attrs: { title: c.text } }, h('strong', null, c.id), ` ${c.text.split(':')[0] ?? ''}`),
      h('strong', null, String(consensusScores[c.id] ?? '–')),
      ...judges.map((j) => String(j.verdict?.scores[c.id] ?? '–')),
    ]),
    { class: 'grid deliverable-scores' },
  );
  const c = round?.consensus;
  const from = c?.source
    ? `${c.source.judge}'s ${c.source.round === 1 ? 'evaluation' : `answer from consensus round ${c.source.round}, given instead of a vote`}${c.forced ? ` (consensus forced: ${c.forced_reason ?? '?'})` : ''}`
    : c?.decided_by === 'harshest' || c?.decided_by === 'mean'
      ? `the ${c.decided_by === 'harshest' ? 'lowest' : 'rounded mean'} of the judges' scores`
      : null;
  const files = await Promise.all(shown.files.map(deliverableFile));
  return section(
    `Deliverable and its scores (round ${shown.round})`,
    h(
      'div',
      { class: 'deliverable-grid' },
      h(
        'div',
        { class: 'deliverable-left' },
        scores,
        from ? h('p', { class: 'muted small consensus-from' }, `consensus column: ${from}`) : null,
      ),
      h('div', { class: 'deliverable' }, files.length ? files : empty('No files were given.')),
    ),
  );
}

/** Without a decision sentence (a consensus.json written before it had one): what its fields say. */
function fallbackDecision(c: Consensus): string {
  if (c.mode !== 'vote') return `No vote (${c.mode} mode).`;
  const rounds = c.rounds.length;
  return `${c.forced ? `Forced (${c.forced_reason ?? '?'})` : 'Decided'} after ${rounds} consensus round${rounds === 1 ? '' : 's'}; winner ${c.winner?.judge ?? 'none'}.`;
}

/** One round's consensus: what decided it (the sentence consensus.json and SUMMARY.md carry), its votes, and the answers judges gave instead of voting. */
function consensusBlock(round: number, c: Consensus, criteria: Array<{ id: string }>): HTMLElement {
  const later = (c.answers ?? []).filter((a) => a.round > 1);
  const used = (a: { judge: string; step: number }): boolean => c.source?.judge === a.judge && c.source.step === a.step;
  return h(
    'div',
    { class: 'consensus', dataset: { round: String(round) } },
    h(
      'h3',
      null,
      `Round ${round} · ${c.mode}`,
      c.forced ? ' · ' : null,
      c.forced ? chip('stale', `forced: ${c.forced_reason ?? '?'}`) : null,
      c.winner ? ` · winner ${c.winner.judge}` : '',
    ),
    h('p', { class: 'decision' }, c.decision ?? fallbackDecision(c)),
    c.votes.length || c.stale_votes.length
      ? table(
          ['voter', '→ voted for', 'reason', ''],
          [
            ...c.votes.map((v) => [v.voter, v.target, v.reason, '']),
            ...c.stale_votes.map((v) => [v.voter, v.target, v.reason, chip('stale', 'stale')]),
          ],
          { class: 'grid vote-table', rowClass: (i) => (i >= c.votes.length ? 'stale-vote' : '') },
        )
      : c.mode === 'vote'
        ? empty(`No votes in ${c.rounds.length} consensus round${c.rounds.length === 1 ? '' : 's'}.`)
        : null,
    later.length
      ? h(
          'div',
          null,
          h(
            'p',
            { class: 'muted small' },
            'Answers given anew instead of a vote (consensus round 1 is the evaluations in the matrix above):',
          ),
          table(
            ['judge', 'consensus round', 'verdict', ...criteria.map((x) => x.id), ''],
            later.map((a) => [
              a.judge,
              String(a.round),
              a.verdict,
              ...criteria.map((x) => String(a.scores[x.id] ?? '–')),
              used(a) ? chip('up-to-date', 'verdict and scores used') : '',
            ]),
            { class: 'grid consensus-answers', rowClass: (i) => (later[i] && used(later[i]) ? 'used-answer' : '') },
          ),
        )
      : null,
  );
}

export function refineView(app: App, name: string): View {
  const body = h('div', null, empty('Loading…'));
  const el = h('div', { class: 'page' }, h('p', { class: 'crumbs' }, link('#/refine', 'refine')), h('h1', null, name), body);
  const load = async (): Promise<void> => {
    const data = await getJson<SessionData>(`/api/refine/sessions/${encodeURIComponent(name)}`);
    const s = data.summary;
    const criteria = s?.criteria ?? data.criteria?.criteria ?? [];
    const roundNumbers = s?.rounds.map((r) => r.round) ?? data.rounds.map((r) => r.round);
    const scoreChart = s?.rounds.length
      ? lineChart({
          title: 'Consensus score per criterion per round',
          x: roundNumbers,
          xName: 'round',
          series: criteria.map((c) => ({ label: c.id, values: s.rounds.map((r) => r.scores[c.id] ?? null) })),
          xLabel: (x) => `round ${x}`,
          yLabel: 'score (1-10)',
          points: true,
          width: 520,
        })
      : empty('No scores yet: summary.json is written after the loop.');
    const critiques = h('div');
    const deliverable = await deliverableSection(data, criteria);
    replace(
      body,
      s
        ? h(
            'div',
            { class: 'page-head' },
            h(
              'p',
              null,
              s.final_verdict ? chip(s.final_verdict === 'converged' ? 'up-to-date' : 'stale', s.final_verdict) : null,
              ` stopped: ${s.stopped.reason} after round ${s.stopped.round}`,
              s.rounds.at(-1)?.forced ? ' · ' : null,
              s.rounds.at(-1)?.forced ? chip('stale', `verdict from a forced consensus (${s.rounds.at(-1)?.forced_reason ?? '?'})`) : null,
              ` · this run ${usd(s.usage.this_run.cost_usd)} · whole session ${usd(s.usage.total.original_cost_usd)} (cache saved ${usd(Math.max(0, s.usage.total.original_cost_usd - s.usage.this_run.cost_usd))})`,
            ),
            s.warnings.length
              ? h(
                  'ul',
                  { class: 'warnings' },
                  s.warnings.map((w) => h('li', null, w)),
                )
              : null,
          )
        : null,
      deliverable,
      section(
        'Scores',
        h('div', { class: 'chart-grid' }, scoreChart, judgesChart(data, criteria)),
        criteria.length && data.rounds.length ? matrix(app, data, criteria) : null,
      ),
      section(
        'Criteria',
        table(
          ['id', 'category', 'criterion'],
          criteria.map((c) => [c.id, c.category, c.text]),
        ),
      ),
      s
        ? section(
            'Rounds',
            table(
              ['round', 'verdict', 'winner', 'calls (cached)', 'tokens in/out', 'cost', 'cost when made'],
              s.rounds.map((r) => [
                String(r.round),
                chip(r.verdict === 'converged' ? 'up-to-date' : 'stale', r.verdict),
                r.winner ?? '–',
                `${r.usage.calls} (${r.usage.cached_calls})`,
                `${r.usage.input_tokens}/${r.usage.output_tokens}`,
                usd(r.usage.cost_usd),
                usd(r.usage.original_cost_usd),
              ]),
            ),
          )
        : null,
      section(
        'Consensus',
        data.rounds.map((r) => (r.consensus ? consensusBlock(r.round, r.consensus, criteria) : null)),
      ),
      section('Verdicts and critiques', critiques),
      s?.next_tasks.length
        ? section(
            'Next tasks',
            table(
              ['id', 'priority', 'task', 'criteria'],
              s.next_tasks.map((t) => [t.id, String(t.priority ?? ''), t.description, (t.relates_to ?? []).join(', ')]),
            ),
          )
        : null,
    );
    for (const r of data.rounds) {
      for (const j of r.judges) {
        const md = h('div');
        critiques.appendChild(
          h(
            'details',
            { class: 'judge' },
            h(
              'summary',
              null,
              `Round ${r.round} · ${j.name} · `,
              j.verdict ? chip(j.verdict.verdict === 'converged' ? 'up-to-date' : 'stale', j.verdict.verdict) : '–',
              j.verdict
                ? ` ${Object.entries(j.verdict.scores)
                    .map(([k, v]) => `${k}=${v}`)
                    .join(' ')}`
                : '',
              j.verdict?.status === 'degraded' ? ` (degraded: ${j.verdict.degraded_reason ?? ''})` : '',
            ),
            md,
          ),
        );
        if (j.critique) await renderMarkdown(j.critique, md);
        else md.appendChild(empty('no critique'));
      }
    }
  };
  void load().catch((e: Error) => replace(body, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 1500);
  return {
    el,
    title: name,
    onLive: (m) => m.kind === 'run-event' && m.event.type === 'stage-end' && m.event.pipeline === 'refine' && refresh(),
  };
}
