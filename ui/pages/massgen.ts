/// <reference lib="dom" />
// MassGen: every session of the logs folders (sortable, filterable, paged on the server, filters in
// the address), charts across runs from the per-turn analysis.json files, and one turn: the report
// (Markdown and Mermaid), the answer browser, the vote browser, a timeline swimlane per agent, and
// enforcement and API errors.
import { getJson, qs } from '../api.ts';
import type { App, View } from '../app.ts';
import { throttle } from '../app.ts';
import { barList, lineChart } from '../charts.ts';
import { diffView } from '../diff.ts';
import { chip, empty, errorBox, h, link, replace, route, seconds, section, svg, table, usd } from '../dom.ts';
import { renderMarkdown } from '../markdown.ts';
import type { ChartPoint, SessionRow } from '../../src/ui/data/massgen.ts';
import { experimentGrids, liveHref } from './experiments.ts';

const COLUMNS: Array<[string, string | null]> = [
  ['session', 'time'],
  ['turns', 'turns'],
  ['state', null],
  ['winner', null],
  ['duration', 'duration'],
  ['cost', 'cost'],
  ['enforcement retries', 'retries'],
  ['question', null],
];

function turnHref(dir: string, extra: Record<string, string> = {}): string {
  return `${route('massgen', 'turn', dir)}${qs(extra)}`;
}

export function massgenView(app: App): View {
  const PAGE = 50;
  let sort = app.query.get('sort') ?? 'time';
  let order = app.query.get('order') ?? 'desc';
  let offset = Number(app.query.get('offset') ?? 0) || 0;
  const search = h('input', {
    attrs: {
      type: 'search',
      placeholder: 'search (text, any case): session, question, winner',
      maxlength: '200',
      value: app.query.get('q') ?? '',
      'aria-label': 'search',
    },
  });
  const stateSelect = h(
    'select',
    { attrs: { 'aria-label': 'state' } },
    ['', 'completed', 'in_progress', 'incomplete', 'failed'].map((s) => h('option', { attrs: { value: s } }, s || 'any state')),
  );
  stateSelect.value = app.query.get('state') ?? '';
  const analyzedSelect = h(
    'select',
    { attrs: { 'aria-label': 'analyzed' } },
    h('option', { attrs: { value: '' } }, 'analyzed or not'),
    h('option', { attrs: { value: 'yes' } }, 'analyzed'),
    h('option', { attrs: { value: 'no' } }, 'not analyzed'),
  );
  analyzedSelect.value = app.query.get('analyzed') ?? '';
  const box = h('div', null, empty('Loading sessions…'));
  const pager = h('div', { class: 'pager' });
  const charts = h('div', { class: 'charts' }, empty('Charts load after the list…'));
  const folders = h(
    'p',
    { class: 'muted small' },
    app.overview.logsDirs.length
      ? `Logs folders: ${app.overview.logsDirs.join(', ')}`
      : 'No MassGen logs folder here (.massgen/massgen_logs); start with --logs-dir D.',
  );
  const grids = experimentGrids(app);
  const el = h(
    'div',
    { class: 'page' },
    h('h1', null, 'MassGen runs'),
    folders,
    grids.el,
    h('div', { class: 'toolbar' }, search, stateSelect, analyzedSelect),
    box,
    pager,
    section('Across runs', charts),
  );

  const load = async (): Promise<void> => {
    const data = await getJson<{ total: number; rows: SessionRow[]; error?: string }>(
      `/api/massgen/sessions${qs({ sort, order, offset, limit: PAGE, q: search.value, state: stateSelect.value, analyzed: analyzedSelect.value })}`,
    );
    if (data.error) return replace(box, errorBox(data.error));
    const head = h(
      'tr',
      null,
      COLUMNS.map(([label, key]) =>
        h(
          'th',
          key
            ? {
                class: `sortable${sort === key ? ` sorted-${order}` : ''}`,
                on: { click: () => setSort(key) },
                attrs: { 'aria-sort': sort === key ? (order === 'asc' ? 'ascending' : 'descending') : 'none' },
              }
            : null,
          label,
          key && sort === key ? (order === 'asc' ? ' ▲' : ' ▼') : '',
        ),
      ),
    );
    const rows = data.rows.map((r) =>
      h(
        'tr',
        { dataset: { session: r.session } },
        h('td', null, h('div', null, r.timestamp), h('div', { class: 'muted small' }, r.session)),
        h(
          'td',
          null,
          r.turns.map((t) =>
            h(
              'div',
              null,
              link(turnHref(t.dir), `turn ${t.turn}`),
              t.analyzed
                ? ''
                : h('span', { class: 'muted small', title: 'no analysis.json yet: run refinery run analyze' }, ' (not analyzed)'),
            ),
          ),
        ),
        h('td', null, r.state ? chip(r.state) : '–'),
        h(
          'td',
          null,
          r.turns.map((t) => h('div', null, t.winner ?? '–')),
        ),
        h('td', null, seconds(r.wallClockSeconds)),
        h('td', null, usd(r.costUsd)),
        h('td', null, r.enforcementRetries === null ? '–' : String(r.enforcementRetries)),
        h('td', { class: 'question' }, r.question ?? ''),
      ),
    );
    replace(
      box,
      data.rows.length
        ? h('table', { class: 'grid sessions' }, h('thead', null, head), h('tbody', null, rows))
        : empty('No MassGen session matches.'),
    );
    replace(
      pager,
      offset > 0 ? h('button', { on: { click: () => go(offset - PAGE) } }, '← previous') : null,
      h('span', { class: 'muted small' }, data.total ? `${offset + 1}–${Math.min(offset + PAGE, data.total)} of ${data.total}` : ''),
      offset + PAGE < data.total ? h('button', { on: { click: () => go(offset + PAGE) } }, 'next →') : null,
    );
  };
  const go = (next: number): void => {
    offset = Math.max(0, next);
    app.setQuery({
      sort: sort === 'time' ? undefined : sort,
      order: order === 'desc' ? undefined : order,
      offset: offset || undefined,
      q: search.value || undefined,
      state: stateSelect.value || undefined,
      analyzed: analyzedSelect.value || undefined,
    });
    void load().catch((e: Error) => replace(box, errorBox(e.message)));
  };
  const setSort = (key: string): void => {
    order = sort === key && order === 'desc' ? 'asc' : 'desc';
    sort = key;
    go(0);
  };
  let typing: number | undefined;
  search.addEventListener('input', () => {
    window.clearTimeout(typing);
    typing = window.setTimeout(() => go(0), 300);
  });
  stateSelect.addEventListener('change', () => go(0));
  analyzedSelect.addEventListener('change', () => go(0));

  const loadCharts = async (): Promise<void> => {
    const { points } = await getJson<{ points: ChartPoint[] }>('/api/massgen/charts');
    if (points.length === 0) return replace(charts, empty('No analyzed turn yet: run refinery run analyze (or just analyze).'));
    const x = points.map((_, i) => i + 1);
    const label = (i: number): string => points[i - 1]?.time.slice(5) ?? '';
    const wins = new Map<string, number>();
    const models = new Map<string, number>();
    for (const p of points) {
      if (p.winner) wins.set(p.winner, (wins.get(p.winner) ?? 0) + 1);
      if (p.winnerModel) models.set(p.winnerModel, (models.get(p.winnerModel) ?? 0) + 1);
    }
    const top = (m: Map<string, number>): Array<[string, number]> => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
    replace(
      charts,
      h('p', { class: 'muted small' }, `${points.length} analyzed turn${points.length === 1 ? '' : 's'}, oldest first`),
      h(
        'div',
        { class: 'chart-grid' },
        lineChart({
          title: 'Cost per turn (USD)',
          x,
          xName: 'turn #',
          series: [{ label: 'cost', values: points.map((p) => p.costUsd) }],
          xLabel: label,
        }),
        lineChart({
          title: 'Duration per turn (s)',
          x,
          xName: 'turn #',
          series: [{ label: 'wall clock', values: points.map((p) => p.wallClockSeconds) }],
          xLabel: label,
        }),
        lineChart({
          title: 'Enforcement retries per turn',
          x,
          xName: 'turn #',
          series: [{ label: 'retries', values: points.map((p) => p.enforcementRetries) }],
          xLabel: label,
        }),
        h('div', null, barList('Winners by agent', top(wins)), barList('Winners by model', top(models))),
      ),
    );
  };

  void load()
    .then(() => loadCharts())
    .catch((e: Error) => replace(box, errorBox(e.message)));
  const refresh = throttle(() => void Promise.all([load(), loadCharts()]).catch(() => undefined), 2000);
  return {
    el,
    title: 'MassGen',
    onLive: (m) => {
      grids.onLive(m);
      if (m.kind === 'run-event' && m.event.type === 'stage-end') refresh();
    },
    reload: () => {
      grids.reload();
      refresh();
    },
  };
}

interface Analysis {
  question?: string;
  state?: { value: string; finishReasonDetails?: string };
  winner?: { agentId: string | null } | null;
  overview?: Record<string, number | string | null>;
  agents?: Array<{
    id: string;
    label?: string;
    model?: string;
    backend?: string;
    status?: string;
    answers?: number;
    votesCast?: number;
    votesReceived?: number;
    enforcementRetries?: number;
    costUsd?: number | null;
  }>;
  answers?: Array<{
    label: string;
    agentId: string;
    attempt: number;
    time: string | null;
    at: number | null;
    chars: number | null;
    preview?: string;
  }>;
  votes?: Array<{
    voterId: string;
    votedFor: string;
    votedForLabel: string | null;
    reason: string | null;
    attempt: number;
    time: string | null;
    at: number | null;
    superseded: boolean;
    stale: boolean;
  }>;
  ignoredVotes?: Array<{ agentId: string; attempt: number; time: string | null; at: number | null; details: string }>;
  coordinationFlow?: Array<{ at: number | null; type: string; agentId: string | null; text: string }>;
  timing?: {
    rounds?: Array<{
      agentId: string;
      attempt: number;
      round: number;
      type: string;
      outcome: string;
      startAt: number | null;
      endAt: number | null;
      seconds: number | null;
    }>;
  };
  errors?: {
    enforcement?: Array<{
      agentId: string;
      attempt: number;
      round: number;
      retry: number;
      reason: string;
      message: string;
      bufferChars?: number;
    }>;
    enforcementByReason?: Array<{ reason: string; count: number; agents: string[] }>;
    apiErrors?: Array<{ agentId: string | null; time: string | null; message: string; source?: string }>;
    deniedToolCalls?: Array<{ tool: string; agentId: string | null; reason: string }>;
    mcpErrors?: Array<{ line: number; level: string; message: string }>;
    agentErrors?: Array<Record<string, unknown>>;
    timeouts?: Array<Record<string, unknown>>;
    exceptions?: Array<Record<string, unknown>>;
  };
}

interface TurnData {
  session: string;
  sessionDir: string;
  turn: number;
  dir: string;
  layout: string;
  analysis: Analysis | null;
  analysisProblem: string | null;
  report: { text: string; truncated: boolean; bytes: number } | null;
  answers: Array<{
    label: string;
    agentId: string;
    attempt: number;
    text: string | null;
    truncated: boolean;
    bytes: number | null;
    path: string | null;
  }>;
}

const TABS = ['report', 'answers', 'votes', 'timeline', 'errors'] as const;
type Tab = (typeof TABS)[number];

function answersTab(app: App, data: TurnData): HTMLElement {
  const a = data.analysis;
  const meta = new Map((a?.answers ?? []).map((x) => [`${x.attempt}:${x.label}`, x]));
  const byKey = new Map(data.answers.map((x) => [`${x.attempt}:${x.label}`, x]));
  // Every answer the analysis knows, plus any snapshot it did not list.
  const keys = [
    ...new Set([...(a?.answers ?? []).map((x) => `${x.attempt}:${x.label}`), ...data.answers.map((x) => `${x.attempt}:${x.label}`)]),
  ];
  const winner = a?.winner?.agentId ?? null;
  const agents = [...new Set(keys.map((k) => (meta.get(k)?.agentId ?? byKey.get(k)?.agentId) as string))];
  const selectedAgent = app.query.get('agent') ?? '';
  const focus = app.query.get('answer');
  const picked: string[] = [];
  const compare = h('div');
  const filter = h(
    'div',
    { class: 'toolbar' },
    h('span', { class: 'muted small' }, 'agent: '),
    [''].concat(agents).map((ag) =>
      h(
        'a',
        {
          class: `pill${ag === selectedAgent ? ' active' : ''}`,
          href: turnHref(data.dir, { tab: 'answers', ...(ag ? { agent: ag } : {}) }),
        },
        ag || 'all',
      ),
    ),
  );
  const list = keys
    .filter((k) => !selectedAgent || (meta.get(k)?.agentId ?? byKey.get(k)?.agentId) === selectedAgent)
    .map((k) => {
      const m = meta.get(k);
      const snap = byKey.get(k);
      const label = m?.label ?? snap?.label ?? k;
      const agent = m?.agentId ?? snap?.agentId ?? '';
      const text = snap?.text ?? m?.preview ?? null;
      const lastOfWinner =
        winner !== null && agent === winner && keys.filter((x) => (meta.get(x)?.agentId ?? byKey.get(x)?.agentId) === winner).at(-1) === k;
      const box = h(
        'article',
        { class: `answer${focus === label ? ' focused' : ''}`, id: `answer-${label}`, dataset: { label, agent } },
        h(
          'header',
          null,
          h('a', { class: 'answer-label', href: turnHref(data.dir, { tab: 'answers', answer: label }) }, label),
          ` ${agent} · attempt ${m?.attempt ?? snap?.attempt ?? '?'}${m?.at != null ? ` · at ${seconds(m.at)}` : ''}${m?.chars != null ? ` · ${m.chars} chars` : ''} `,
          lastOfWinner ? chip('up-to-date', 'winner') : null,
          h(
            'label',
            { class: 'small' },
            h('input', { attrs: { type: 'checkbox' }, on: { change: (e) => pick(k, (e.target as HTMLInputElement).checked) } }),
            ' compare',
          ),
        ),
        h('pre', { class: 'answer-text' }, text ?? '(no text found)'),
        snap?.truncated ? h('p', { class: 'muted small' }, `shown: the first 256 KB of ${snap.bytes} bytes`) : null,
        snap?.text === null || !snap
          ? h('p', { class: 'muted small' }, 'the snapshot file was not found; the analysis preview is shown')
          : null,
      );
      return box;
    });
  const pick = (key: string, on: boolean): void => {
    if (on) picked.push(key);
    else picked.splice(picked.indexOf(key), 1);
    if (picked.length === 2) {
      const [x, y] = picked.map((k) => byKey.get(k)) as Array<TurnData['answers'][number] | undefined>;
      replace(compare, section('Compare', diffView(x?.label ?? '', x?.text ?? '', y?.label ?? '', y?.text ?? '')));
      compare.scrollIntoView({ block: 'start' });
    } else replace(compare);
  };
  if (focus) window.setTimeout(() => document.getElementById(`answer-${focus}`)?.scrollIntoView({ block: 'center' }), 50);
  return h(
    'div',
    { class: 'answers' },
    filter,
    h('p', { class: 'muted small' }, `${keys.length} answer${keys.length === 1 ? '' : 's'}`),
    compare,
    list.length ? list : empty('No answers in this turn.'),
  );
}

function votesTab(data: TurnData): HTMLElement {
  const a = data.analysis;
  if (!a) return empty('Votes come from analysis.json: run refinery run analyze.');
  const votes = a.votes ?? [];
  const tally = new Map<string, number>();
  for (const v of votes) if (!v.superseded && !v.stale) tally.set(v.votedFor, (tally.get(v.votedFor) ?? 0) + 1);
  return h(
    'div',
    { class: 'votes' },
    barList(
      'Votes that counted, by agent voted for',
      [...tally.entries()].sort((x, y) => y[1] - x[1]),
    ),
    table(
      ['#', 'voter', '→ voted for', 'reason', 'attempt', 'at', ''],
      votes.map((v, i) => [
        h('a', { id: `vote-${i + 1}`, href: turnHref(data.dir, { tab: 'votes', vote: String(i + 1) }) }, String(i + 1)),
        v.voterId,
        `${v.votedFor}${v.votedForLabel ? ` (${v.votedForLabel})` : ''}`,
        v.reason ?? '',
        String(v.attempt),
        seconds(v.at),
        h('span', null, v.superseded ? chip('skipped', 'superseded') : null, v.stale ? chip('stale', 'stale') : null),
      ]),
      {
        class: 'grid vote-table',
        rowClass: (i) => [votes[i]?.superseded ? 'superseded' : '', votes[i]?.stale ? 'stale-vote' : ''].join(' '),
      },
    ),
    (a.ignoredVotes ?? []).length
      ? h(
          'div',
          null,
          h('h3', null, 'Ignored votes'),
          table(
            ['agent', 'attempt', 'at', 'details'],
            (a.ignoredVotes ?? []).map((v) => [v.agentId, String(v.attempt), seconds(v.at), v.details]),
          ),
        )
      : null,
  );
}

function timelineTab(data: TurnData): HTMLElement {
  const a = data.analysis;
  if (!a) return empty('The timeline comes from analysis.json: run refinery run analyze.');
  const agents = (a.agents ?? []).map((x) => x.id);
  const rounds = a.timing?.rounds ?? [];
  const times = [
    ...rounds.flatMap((r) => [r.startAt ?? 0, r.endAt ?? 0]),
    ...(a.answers ?? []).map((x) => x.at ?? 0),
    ...(a.votes ?? []).map((x) => x.at ?? 0),
    ...(a.coordinationFlow ?? []).map((x) => x.at ?? 0),
  ];
  const end = Math.max(1, ...times);
  const laneH = 44;
  const left = 110;
  const width = 980;
  const scale = (t: number): number => left + (Math.max(0, t) / end) * (width - left - 20);
  const root = svg('svg', { class: 'swimlane', viewBox: `0 0 ${width} ${agents.length * laneH + 40}`, width: '100%' });
  agents.forEach((agent, i) => {
    const y = 10 + i * laneH;
    root.appendChild(svg('rect', { x: 0, y, width, height: laneH - 4, class: i % 2 ? 'lane odd' : 'lane' }));
    root.appendChild(svg('text', { x: 8, y: y + 24, class: 'lane-label' }, agent));
    for (const r of rounds.filter((x) => x.agentId === agent && x.startAt !== null && x.endAt !== null)) {
      root.appendChild(
        svg(
          'rect',
          {
            x: scale(r.startAt as number),
            y: y + 8,
            width: Math.max(2, scale(r.endAt as number) - scale(r.startAt as number)),
            height: laneH - 20,
            class: `round round-${r.type}`,
            rx: 3,
          },
          svg('title', {}, `${agent} round ${r.round} (${r.type}): ${r.outcome}, ${seconds(r.seconds)}`),
        ),
      );
    }
    for (const x of (a.answers ?? []).filter((x) => x.agentId === agent && x.at !== null)) {
      root.appendChild(
        svg(
          'circle',
          { cx: scale(x.at as number), cy: y + 20, r: 6, class: 'mark-answer' },
          svg('title', {}, `answer ${x.label} at ${seconds(x.at)}`),
        ),
      );
    }
    for (const v of (a.votes ?? []).filter((v) => v.voterId === agent && v.at !== null)) {
      const cx = scale(v.at as number);
      root.appendChild(
        svg(
          'path',
          { d: `M${cx},${y + 12} l6,8 l-6,8 l-6,-8 z`, class: `mark-vote${v.superseded ? ' superseded' : ''}` },
          svg('title', {}, `vote for ${v.votedFor}${v.superseded ? ' (superseded)' : ''}: ${v.reason ?? ''}`),
        ),
      );
      // The vote points at the lane of the agent it chose.
      const target = agents.indexOf(v.votedFor);
      if (target >= 0 && target !== i)
        root.appendChild(
          svg('line', {
            x1: cx,
            y1: y + 20,
            x2: cx + 8,
            y2: 10 + target * laneH + 20,
            class: `vote-arrow${v.superseded ? ' superseded' : ''}`,
          }),
        );
    }
  });
  for (const f of (a.coordinationFlow ?? []).filter(
    (f) => f.type === 'final_answer' || f.type === 'consensus_reached' || f.type === 'restart_completed',
  )) {
    if (f.at === null) continue;
    const x = scale(f.at);
    root.appendChild(
      svg(
        'line',
        { x1: x, y1: 4, x2: x, y2: agents.length * laneH + 8, class: `flow-line flow-${f.type}` },
        svg('title', {}, `${f.type}: ${f.text}`),
      ),
    );
  }
  root.appendChild(svg('text', { x: left, y: agents.length * laneH + 30, class: 'axis' }, '0 s'));
  root.appendChild(svg('text', { x: width - 70, y: agents.length * laneH + 30, class: 'axis' }, seconds(end)));
  return h(
    'div',
    null,
    h(
      'p',
      { class: 'muted small' },
      'One lane per agent: rounds as bars (answering, voting, presenting), answers as circles, votes as diamonds with a line to the chosen agent (superseded ones faded); vertical lines mark restarts and the final answer.',
    ),
    root,
  );
}

/** Denied calls (a permission hook blocked them; they never ran) counted per agent and tool. */
function deniedTable(calls: Array<{ tool: string; agentId: string | null; reason: string }>): HTMLElement {
  if (calls.length === 0) return empty('none');
  const groups = new Map<string, { agent: string; tool: string; count: number; reason: string }>();
  for (const c of calls) {
    const key = `${c.agentId ?? '–'}\u0000${c.tool}`;
    const g = groups.get(key) ?? { agent: c.agentId ?? '–', tool: c.tool, count: 0, reason: c.reason };
    g.count += 1;
    groups.set(key, g);
  }
  return table(
    ['agent', 'tool', 'denied', 'reason'],
    [...groups.values()].map((g) => [g.agent, g.tool, String(g.count), g.reason]),
  );
}

function errorsTab(data: TurnData): HTMLElement {
  const e = data.analysis?.errors;
  if (!e) return empty('Errors come from analysis.json: run refinery run analyze.');
  return h(
    'div',
    null,
    barList(
      'Enforcement retries by reason',
      (e.enforcementByReason ?? []).map((r) => [r.reason, r.count]),
    ),
    h('h3', null, 'Enforcement'),
    (e.enforcement ?? []).length
      ? table(
          ['agent', 'attempt', 'round', 'retry', 'reason', 'message'],
          (e.enforcement ?? []).map((x) => [x.agentId, String(x.attempt), String(x.round), String(x.retry), x.reason, x.message]),
        )
      : empty('none'),
    h('h3', null, 'API errors'),
    (e.apiErrors ?? []).length
      ? table(
          ['agent', 'time', 'message'],
          (e.apiErrors ?? []).map((x) => [x.agentId ?? '–', x.time ?? '–', x.message]),
        )
      : empty('none'),
    h('h3', null, 'Denied tool calls'),
    deniedTable(e.deniedToolCalls ?? []),
    (e.mcpErrors ?? []).length
      ? h(
          'div',
          null,
          h('h3', null, 'MCP errors (massgen.log)'),
          table(
            ['line', 'level', 'message'],
            (e.mcpErrors ?? []).map((x) => [String(x.line), x.level, x.message]),
          ),
        )
      : null,
    [
      ['Agent errors', e.agentErrors],
      ['Timeouts', e.timeouts],
      ['Exceptions', e.exceptions],
    ].map(([title, list]) =>
      (list as unknown[] | undefined)?.length
        ? h('div', null, h('h3', null, title as string), h('pre', { class: 'code' }, JSON.stringify(list, null, 2)))
        : null,
    ),
  );
}

export function turnView(app: App, dir: string): View {
  const body = h('div', null, empty('Loading…'));
  const el = h('div', { class: 'page' }, h('p', { class: 'crumbs' }, link('#/massgen', 'MassGen')), body);
  const tab = (TABS as readonly string[]).includes(app.query.get('tab') ?? '') ? (app.query.get('tab') as Tab) : 'report';
  const load = async (): Promise<void> => {
    const data = await getJson<TurnData>(`/api/massgen/turn${qs({ dir })}`);
    const a = data.analysis;
    const content = h('div', { class: `tab-body tab-${tab}` });
    replace(
      body,
      h('h1', null, `${data.session} · turn ${data.turn}`),
      h('p', { class: 'small' }, link(liveHref(data.sessionDir), 'status and agent outputs (live while the run goes on)')),
      a
        ? h(
            'div',
            { class: 'page-head' },
            h(
              'p',
              null,
              a.state ? chip(a.state.value) : null,
              ` winner ${a.winner?.agentId ?? '–'} · ${seconds(a.overview?.wallClockSeconds as number | null)} · ${usd(a.overview?.totalCostUsd as number | null)} · ${a.overview?.answers ?? 0} answers · ${a.overview?.votes ?? 0} votes`,
            ),
            a.question ? h('p', { class: 'question' }, a.question) : null,
          )
        : h(
            'p',
            { class: 'notice' },
            data.analysisProblem ?? 'This turn has not been analyzed yet: run refinery run analyze (answers are shown from the snapshots).',
          ),
      h(
        'nav',
        { class: 'tabs' },
        TABS.map((t) => h('a', { class: t === tab ? 'active' : '', href: turnHref(dir, t === 'report' ? {} : { tab: t }) }, t)),
      ),
      content,
    );
    if (tab === 'report') {
      if (data.report) {
        if (data.report.truncated)
          content.appendChild(h('p', { class: 'muted small' }, `The report is ${data.report.bytes} bytes; the first 4 MB are shown.`));
        const md = h('div');
        content.appendChild(md);
        await renderMarkdown(data.report.text, md);
      } else content.appendChild(empty('No ANALYSIS_REPORT.md yet: run refinery run analyze.'));
    } else if (tab === 'answers') content.appendChild(answersTab(app, data));
    else if (tab === 'votes') {
      content.appendChild(votesTab(data));
      const vote = app.query.get('vote');
      if (vote) document.getElementById(`vote-${vote}`)?.closest('tr')?.classList.add('focused');
    } else if (tab === 'timeline') content.appendChild(timelineTab(data));
    else content.appendChild(errorsTab(data));
  };
  void load().catch((e: Error) => replace(body, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 2000);
  return {
    el,
    title: dir,
    onLive: (m) =>
      m.kind === 'run-event' &&
      m.event.type === 'stage-end' &&
      String(m.event.stage ?? '').includes(dir.split('/').slice(-2).join('/')) &&
      refresh(),
    reload: () => void load(),
  };
}
