/// <reference lib="dom" />
// Pipelines: the list, one pipeline (its DAG and a paged stage table with the selection language),
// and one stage (why it would run, its outputs checked, its runs, rejected artifacts, its log).
import { getJson, postJson, qs } from '../api.ts';
import type { App, View } from '../app.ts';
import { throttle } from '../app.ts';
import { DagView, type FoldedGraph, type GraphNode, type StageState } from '../dag.ts';
import { chip, empty, errorBox, h, link, ms, replace, route, section, table, when } from '../dom.ts';
import type { LiveMessage, RunEvent } from '../live.ts';

const STATES: StageState[] = ['running', 'failed', 'blocked', 'stale', 'never-run', 'skipped', 'up-to-date'];

interface PipelineSummary {
  name: string;
  file: string;
  description: string | null;
  stages: number;
  loops: number;
  counts: Partial<Record<StageState, number>>;
  error: string | null;
}

interface StageRow {
  id: string;
  stage: string;
  kind: string;
  state: StageState;
  needs: number;
  lastDurationMs: number | null;
  finishedAt: string | null;
}

/** The state a live event puts a stage in. */
export function stateFromEvent(e: RunEvent): StageState | undefined {
  if (e.type === 'stage-start') return 'running';
  if (e.type !== 'stage-end') return undefined;
  switch (e.status) {
    case 'succeeded':
    case 'fresh':
      return 'up-to-date';
    case 'failed':
      return 'failed';
    case 'blocked':
      return 'blocked';
    case 'skipped':
      return 'skipped';
    default:
      return 'stale';
  }
}

function countsBar(counts: Partial<Record<StageState, number>>): HTMLElement {
  return h(
    'div',
    { class: 'counts' },
    STATES.filter((s) => counts[s]).map((s) => h('span', { class: 'count' }, chip(s, `${counts[s]} ${s}`))),
  );
}

export function pipelinesView(_app: App): View {
  const list = h('div', { class: 'cards' }, empty('Loading pipelines…'));
  const el = h('div', { class: 'page' }, h('h1', null, 'Pipelines'), list);
  const load = async (): Promise<void> => {
    const { pipelines } = await getJson<{ pipelines: PipelineSummary[] }>('/api/pipelines');
    if (pipelines.length === 0) return replace(list, empty('No pipelines here: add pipelines/NAME.yaml (refinery init makes one).'));
    replace(
      list,
      pipelines.map((p) =>
        h(
          'a',
          { class: 'card pipeline-card', href: route('pipelines', p.name), dataset: { pipeline: p.name } },
          h('h2', null, p.name),
          p.description ? h('p', { class: 'muted' }, p.description) : null,
          h(
            'p',
            { class: 'muted small' },
            `${p.file} · ${p.stages} stage${p.stages === 1 ? '' : 's'}${p.loops ? ` · ${p.loops} loop${p.loops === 1 ? '' : 's'}` : ''}`,
          ),
          p.error ? errorBox(p.error) : countsBar(p.counts),
        ),
      ),
    );
  };
  const refresh = throttle(() => void load().catch(() => undefined), 500);
  void load().catch((e: Error) => replace(list, errorBox(e.message)));
  return {
    el,
    title: 'Pipelines',
    onLive: (m) => m.kind === 'run-event' && (m.event.type === 'run-end' || m.event.type === 'stage-end') && refresh(),
    reload: () => void load(),
  };
}

async function action(app: App, body: Record<string, unknown>): Promise<void> {
  try {
    const result = await postJson<{ message: string }>('/api/actions/run', body);
    app.toast(result.message, 'ok');
  } catch (error) {
    app.toast((error as Error).message, 'error');
  }
}

export function pipelineView(app: App, name: string): View {
  const PAGE = 100;
  const dag = new DagView((node: GraphNode) => {
    if (node.kind === 'stage') location.hash = route('pipelines', name, 'stage', node.id);
    else if (node.kind !== 'layer') setSelect(node.kind === 'loop' ? `${node.id}*` : node.id);
  });
  const header = h('div', { class: 'page-head' }, h('h1', null, name));
  const counts = h('div');
  const assessLine = h('p', { class: 'muted small assess' }, 'Checking which stages are stale (refinery plan)…');
  const select = h('input', {
    class: 'select',
    attrs: {
      type: 'search',
      placeholder: 'select: +stage, stage+, 2+stage, status:failed, a+ and +b, name*',
      value: app.query.get('select') ?? '',
      'aria-label': 'stage selection',
    },
  });
  const matchCount = h('span', { class: 'muted small' });
  const tableBox = h('div');
  const pager = h('div', { class: 'pager' });
  const graphNote = h('p', { class: 'muted small' });
  const el = h(
    'div',
    { class: 'page' },
    header,
    counts,
    section('Graph', graphNote, dag.el),
    assessLine,
    section('Stages', h('div', { class: 'toolbar' }, select, matchCount), tableBox, pager),
  );
  let graph: FoldedGraph | undefined;
  let offset = Number(app.query.get('offset') ?? 0) || 0;
  const chips = new Map<string, HTMLElement>();

  if (app.overview.actions) {
    header.appendChild(
      h(
        'div',
        { class: 'actions' },
        h('button', { on: { click: () => void action(app, { pipeline: name }) } }, 'Run'),
        h('button', { on: { click: () => void action(app, { pipeline: name, force: true }) } }, 'Run --force'),
      ),
    );
  }

  const loadGraph = async (): Promise<void> => {
    const result = await getJson<{ summary: PipelineSummary; graph: FoldedGraph; assessed: boolean } | { error: string }>(
      `/api/pipelines/${encodeURIComponent(name)}`,
    );
    if ('error' in result) {
      replace(counts, errorBox(result.error));
      return;
    }
    replace(
      counts,
      h('p', { class: 'muted' }, result.summary.description ?? '', ` ${result.summary.file} · ${result.summary.stages} stages`),
      countsBar(result.summary.counts),
    );
    graph = result.graph;
    graphNote.textContent = result.graph.layered
      ? `${result.summary.stages} stages are drawn as ${result.graph.nodes.length} depth layers; select stages below to see them.`
      : result.graph.nodes.some((n) => n.kind !== 'stage')
        ? 'foreach instances are folded into one box with their counts; loops are groups. Click a box to list its stages.'
        : '';
    await dag.show(result.graph);
  };

  const loadTable = async (): Promise<void> => {
    const query = select.value.trim();
    const data = await getJson<{ total: number; rows: StageRow[]; error?: string }>(
      `/api/pipelines/${encodeURIComponent(name)}/stages${qs({ select: query, offset, limit: PAGE })}`,
    );
    chips.clear();
    if (data.error) {
      matchCount.textContent = '';
      replace(tableBox, errorBox(data.error));
      replace(pager);
      return;
    }
    matchCount.textContent = query ? `${data.total} match${data.total === 1 ? '' : 'es'}` : `${data.total} stages`;
    const rows = data.rows.map((r) => {
      const c = chip(r.state);
      chips.set(r.id, c);
      return [link(route('pipelines', name, 'stage', r.id), r.id), c, r.kind, ms(r.lastDurationMs), when(r.finishedAt)];
    });
    replace(
      tableBox,
      data.rows.length
        ? table(['stage', 'state', 'kind', 'last duration', 'last success'], rows, { class: 'grid stages', rowId: (i) => `stage-row-${i}` })
        : empty('No stage matches.'),
    );
    replace(
      pager,
      offset > 0 ? h('button', { on: { click: () => page(offset - PAGE) } }, '← previous') : null,
      h('span', { class: 'muted small' }, data.total ? `${offset + 1}–${Math.min(offset + PAGE, data.total)} of ${data.total}` : ''),
      offset + PAGE < data.total ? h('button', { on: { click: () => page(offset + PAGE) } }, 'next →') : null,
    );
  };

  const page = (next: number): void => {
    offset = Math.max(0, next);
    app.setQuery({ select: select.value.trim() || undefined, offset: offset || undefined });
    void loadTable();
  };

  const setSelect = (value: string): void => {
    select.value = value;
    page(0);
  };

  let typing: number | undefined;
  select.addEventListener('input', () => {
    window.clearTimeout(typing);
    typing = window.setTimeout(() => page(0), 250);
  });

  const assess = async (): Promise<void> => {
    assessLine.textContent = 'Checking which stages are stale (refinery plan)…';
    const result = await getJson<{ ok: boolean; at?: string; error?: string }>(
      `/api/pipelines/${encodeURIComponent(name)}/assess${qs({ t: Date.now() })}`,
    );
    assessLine.textContent = result.ok
      ? `Stale stages checked at ${when(result.at)} (the same answer as refinery plan).`
      : `Could not check stale stages: ${result.error ?? ''}`;
    await Promise.all([loadGraph(), loadTable()]);
  };

  const refresh = throttle(() => void Promise.all([loadGraph(), loadTable()]).catch(() => undefined), 300);
  const reassess = throttle(() => void assess().catch(() => undefined), 1000);

  void Promise.all([loadGraph(), loadTable()])
    .then(() => assess())
    .catch((e: Error) => replace(counts, errorBox(e.message)));

  return {
    el,
    title: name,
    onLive(m: LiveMessage) {
      if (m.kind !== 'run-event' || m.event.pipeline !== name) return;
      const e = m.event;
      const state = stateFromEvent(e);
      if (state && e.stage) {
        // Straight onto the page: the box and the table row change before any refetch.
        if (graph && !graph.layered) dag.setState(e.stage, state);
        const c = chips.get(e.stage);
        if (c) c.replaceWith((chips.set(e.stage, chip(state)), chips.get(e.stage) as HTMLElement));
      }
      if (e.type === 'run-end') reassess();
      else if (e.type !== 'stage-log' && e.type !== 'stage-progress') refresh();
    },
    reload: () => void assess(),
  };
}

interface StageDetail {
  id: string;
  pipeline: string;
  stage: string;
  state: StageState;
  kind: string;
  description: string | null;
  task: string | null;
  command: string | string[] | null;
  inputs: string[];
  needs: string[];
  vars: Record<string, unknown>;
  record: { runId: string; finishedAt: string; durationMs: number } | null;
  why: { decision: string; reasons: string[] } | null;
  outputs: Array<{
    name: string;
    path: string;
    schema: string | null;
    exists: boolean;
    bytes: number | null;
    validation: null | { ok: boolean | null; issues?: Array<{ pointer: string; message: string }>; message?: string };
  }>;
  history: {
    runs: Array<{ runId: string; status: string; durationMs: number | null; endedAt: string | null; reason: string | null }>;
    rejected: Array<{
      runId: string;
      dir: string | null;
      issues: Array<{ output: string; path: string; pointer: string; message: string }>;
    }>;
    log: { runId: string; lines: Array<{ time: string; stream: string; message: string }>; total: number } | null;
  };
}

function fileLink(path: string): HTMLAnchorElement {
  return link(route('file', path), path);
}

function whyText(why: StageDetail['why']): HTMLElement {
  if (!why) return h('p', { class: 'muted' }, 'Asking refinery plan…');
  if (why.decision === 'fresh')
    return h('p', null, chip('up-to-date', 'up to date'), ' nothing it depends on changed since its last success.');
  const verdict =
    { run: 'would run', maybe: 'would run if its when holds', skip: 'would be skipped', fail: 'would fail', loop: 'is a loop' }[
      why.decision
    ] ?? why.decision;
  return h(
    'div',
    null,
    h('p', null, `It ${verdict}:`),
    h(
      'ul',
      { class: 'reasons' },
      why.reasons.map((r) => h('li', null, r)),
    ),
  );
}

export function stageView(app: App, pipeline: string, id: string): View {
  const body = h('div', null, empty('Loading…'));
  const el = h(
    'div',
    { class: 'page' },
    h('p', { class: 'crumbs' }, link(route('pipelines', pipeline), pipeline), ' / stage'),
    h('h1', { class: 'stage-title' }, id),
    body,
  );
  let detail: StageDetail | undefined;

  const render = (d: StageDetail): void => {
    detail = d;
    const command = Array.isArray(d.command) ? d.command.join(' ') : d.command;
    replace(
      body,
      h(
        'div',
        { class: 'page-head' },
        h(
          'p',
          null,
          chip(d.state),
          ' ',
          d.kind === 'task' ? `task ${d.task ?? ''}` : d.kind === 'run' ? 'command' : 'loop iteration',
          d.record ? ` · last success ${when(d.record.finishedAt)} in ${ms(d.record.durationMs)}` : ' · never succeeded',
        ),
        app.overview.actions
          ? h(
              'div',
              { class: 'actions' },
              h('button', { on: { click: () => void action(app, { pipeline, stage: id }) } }, 'Run this stage'),
              h('button', { on: { click: () => void action(app, { pipeline, stage: id, force: true }) } }, 'Run --force'),
            )
          : null,
      ),
      d.description ? h('p', null, d.description) : null,
      section('Why it would run', whyText(d.why)),
      section(
        'Definition',
        command ? h('pre', { class: 'code' }, command) : null,
        Object.keys(d.vars).length ? h('pre', { class: 'code' }, JSON.stringify(d.vars, null, 2)) : null,
        h('h3', null, 'Inputs'),
        d.inputs.length
          ? h(
              'ul',
              null,
              d.inputs.map((i) => h('li', null, i.includes('*') ? i : fileLink(i))),
            )
          : empty('none'),
        h('h3', null, 'Needs'),
        d.needs.length
          ? h(
              'ul',
              null,
              d.needs.map((n) => h('li', null, link(route('pipelines', pipeline, 'stage', n), n))),
            )
          : empty('none'),
      ),
      section(
        'Outputs',
        d.outputs.length
          ? table(
              ['output', 'path', 'schema', 'size', 'valid'],
              d.outputs.map((o) => [
                o.name,
                o.exists ? fileLink(o.path) : h('span', { class: 'muted' }, `${o.path} (not written)`),
                o.schema ?? '–',
                o.bytes === null ? '–' : `${o.bytes} B`,
                !o.validation
                  ? '–'
                  : o.validation.ok === true
                    ? chip('up-to-date', '✓ valid')
                    : o.validation.ok === null
                      ? h('span', { class: 'muted' }, o.validation.message ?? '')
                      : h('div', null, chip('failed', '✗ invalid'), issuesTable(o.validation.issues ?? [])),
              ]),
            )
          : empty('none'),
      ),
      section(
        'Recent runs',
        d.history.runs.length
          ? table(
              ['run', 'outcome', 'duration', 'ended', 'reason'],
              d.history.runs.map((r) => [
                link(route('runs', r.runId), r.runId),
                chip(r.status),
                ms(r.durationMs),
                when(r.endedAt),
                r.reason ?? '',
              ]),
            )
          : empty('It has not run in the runs kept (the last 100).'),
      ),
      d.history.rejected.length
        ? section(
            'Rejected artifacts',
            d.history.rejected.map((r) =>
              h(
                'div',
                { class: 'rejected' },
                h('p', null, link(route('runs', r.runId), r.runId), r.dir ? [' → ', fileLink(`${r.dir}/errors.json`)] : null),
                issuesTable(r.issues),
              ),
            ),
          )
        : null,
      section(
        'Log',
        d.history.log
          ? h(
              'div',
              null,
              h(
                'p',
                { class: 'muted small' },
                `run ${d.history.log.runId}: the last ${d.history.log.lines.length} of ${d.history.log.total} lines`,
              ),
              h(
                'pre',
                { class: 'log' },
                d.history.log.lines.map((l) => h('span', { class: `log-line stream-${l.stream}` }, `${l.message}\n`)),
              ),
            )
          : empty('No log lines recorded.'),
      ),
    );
  };

  const load = async (why: boolean): Promise<void> => {
    const d = await getJson<StageDetail>(`/api/pipelines/${encodeURIComponent(pipeline)}/stage${qs({ id, why: why ? 1 : undefined })}`);
    render(d);
  };
  void load(false)
    .then(() => load(true))
    .catch((e: Error) => replace(body, errorBox(e.message)));
  const refresh = throttle(() => void load(false).catch(() => undefined), 400);
  return {
    el,
    title: id,
    onLive(m) {
      if (m.kind !== 'run-event' || m.event.pipeline !== pipeline) return;
      if (m.event.stage === id || m.event.type === 'run-end') {
        if (detail && m.event.stage === id) {
          const state = stateFromEvent(m.event);
          const c = el.querySelector('.page-head .chip');
          if (state && c) c.replaceWith(chip(state));
        }
        refresh();
      }
    },
    reload: () => void load(true),
  };
}

export function issuesTable(issues: Array<{ pointer: string; message: string; output?: string }>): HTMLElement {
  return table(
    ['where (JSON pointer)', 'problem'],
    issues.map((i) => [h('code', null, `${i.output ? `${i.output} ` : ''}${i.pointer || '/'}`), i.message]),
    { class: 'grid issues' },
  );
}
