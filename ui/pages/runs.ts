/// <reference lib="dom" />
// Runs: the history (paged on the server, filtered, refreshed by ETag), one run as a Gantt chart
// over time with failures first, and two runs compared stage by stage.
import { getJson, postJson, qs } from '../api.ts';
import type { App, View } from '../app.ts';
import { throttle } from '../app.ts';
import { chip, empty, errorBox, h, link, ms, replace, route, section, table, when } from '../dom.ts';
import { issuesTable } from './pipelines.ts';
import type { RunDetail, RunRow } from '../../src/ui/data/runs.ts';

/** A run as /api/runs/:id sends it: the server's detail, cut to `limit` stages. */
type RunPage = RunDetail & { totalStages: number };

function countsText(counts: Record<string, number> | null): string {
  if (!counts) return '';
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
}

/** Which workers ran how many of the stages shown (`run --workers`); '' when all ran on the coordinator. */
function workersText(stages: RunPage['stages']): string {
  const counts = new Map<string, number>();
  for (const s of stages) counts.set(s.worker ?? '(coordinator)', (counts.get(s.worker ?? '(coordinator)') ?? 0) + 1);
  if (![...counts.keys()].some((k) => k !== '(coordinator)')) return '';
  return `ran on: ${[...counts].map(([name, n]) => `${name} (${n})`).join(', ')}`;
}

export function runsView(app: App): View {
  const PAGE = 50;
  const pipelineSelect = h(
    'select',
    { attrs: { 'aria-label': 'pipeline' } },
    h('option', { attrs: { value: '' } }, 'every pipeline'),
    app.overview.pipelines.map((p) => h('option', { attrs: { value: p } }, p)),
  );
  const statusSelect = h(
    'select',
    { attrs: { 'aria-label': 'outcome' } },
    ['', 'succeeded', 'failed', 'aborted', 'running', 'interrupted'].map((s) => h('option', { attrs: { value: s } }, s || 'any outcome')),
  );
  pipelineSelect.value = app.query.get('pipeline') ?? '';
  statusSelect.value = app.query.get('status') ?? '';
  const box = h('div', null, empty('Loading runs…'));
  const pager = h('div', { class: 'pager' });
  const compareNote = h('p', { class: 'muted small' }, 'Tick two runs to compare them stage by stage.');
  const el = h(
    'div',
    { class: 'page' },
    h('h1', null, 'Runs'),
    h('div', { class: 'toolbar' }, pipelineSelect, statusSelect),
    compareNote,
    box,
    pager,
  );
  let offset = Number(app.query.get('offset') ?? 0) || 0;
  const picked: string[] = [];

  const load = async (): Promise<void> => {
    const data = await getJson<{ total: number; rows: RunRow[] }>(
      `/api/runs${qs({ pipeline: pipelineSelect.value, status: statusSelect.value, offset, limit: PAGE })}`,
    );
    replace(
      box,
      data.rows.length
        ? table(
            ['', 'run', 'pipeline', 'outcome', 'started', 'duration', 'stages'],
            data.rows.map((r) => [
              h('input', {
                attrs: { type: 'checkbox', 'aria-label': `compare ${r.runId}`, ...(picked.includes(r.runId) ? { checked: true } : {}) },
                on: {
                  change: (e) => {
                    const on = (e.target as HTMLInputElement).checked;
                    if (on) picked.push(r.runId);
                    else picked.splice(picked.indexOf(r.runId), 1);
                    if (picked.length === 2) location.hash = route('runs', 'compare', picked[0] as string, picked[1] as string);
                  },
                },
              }),
              link(route('runs', r.runId), r.runId),
              link(route('pipelines', r.pipeline), r.pipeline),
              chip(r.status),
              when(r.startedAt),
              ms(r.durationMs),
              countsText(r.counts),
            ]),
            { class: 'grid runs' },
          )
        : empty('No runs yet (they are kept in .refinery/runs/, the last 100).'),
    );
    replace(
      pager,
      offset > 0 ? h('button', { on: { click: () => go(offset - PAGE) } }, '← newer') : null,
      h('span', { class: 'muted small' }, data.total ? `${offset + 1}–${Math.min(offset + PAGE, data.total)} of ${data.total}` : ''),
      offset + PAGE < data.total ? h('button', { on: { click: () => go(offset + PAGE) } }, 'older →') : null,
    );
  };
  const go = (next: number): void => {
    offset = Math.max(0, next);
    app.setQuery({ pipeline: pipelineSelect.value || undefined, status: statusSelect.value || undefined, offset: offset || undefined });
    void load();
  };
  pipelineSelect.addEventListener('change', () => go(0));
  statusSelect.addEventListener('change', () => go(0));
  void load().catch((e: Error) => replace(box, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 500);
  return {
    el,
    title: 'Runs',
    onLive: (m) => m.kind === 'run-event' && (m.event.type === 'run-start' || m.event.type === 'run-end') && refresh(),
    reload: () => void load(),
  };
}

function gantt(run: RunPage, pipeline: string): HTMLElement {
  const start = Date.parse(run.row.startedAt ?? '') || Math.min(...run.stages.map((s) => Date.parse(s.startedAt ?? '') || Infinity));
  const live = run.row.status === 'running';
  const end = live ? Date.now() : Math.max(start + (run.row.durationMs ?? 0), ...run.stages.map((s) => Date.parse(s.endedAt ?? '') || 0));
  const span = Math.max(1, end - start);
  const rows = run.stages.map((s) => {
    const a = (Date.parse(s.startedAt ?? '') || start) - start;
    const b = (s.endedAt ? Date.parse(s.endedAt) : live ? Date.now() : end) - start;
    const left = (Math.max(0, a) / span) * 100;
    const width = Math.max(0.3, ((b - a) / span) * 100);
    return h(
      'div',
      { class: `gantt-row status-${s.status}`, dataset: { stage: s.id } },
      h('span', { class: 'gantt-label', title: s.id }, link(route('pipelines', pipeline, 'stage', s.id), s.id)),
      h(
        'span',
        { class: 'gantt-track' },
        h('span', {
          class: `gantt-bar state-${s.status === 'succeeded' || s.status === 'fresh' ? 'up-to-date' : s.status}`,
          title: `${s.id}: ${s.status}, ${ms(s.durationMs)}${s.worker ? ` on ${s.worker}` : ''}${s.reason ? ` (${s.reason})` : ''}`,
          attrs: { style: `left:${left.toFixed(2)}%;width:${Math.min(width, 100 - left).toFixed(2)}%` },
        }),
      ),
      h('span', { class: 'gantt-time' }, `${s.status === 'running' ? 'running' : ms(s.durationMs)}${s.worker ? ` · ${s.worker}` : ''}`),
    );
  });
  return h('div', { class: 'gantt' }, h('div', { class: 'gantt-axis muted small' }, h('span', null, '0'), h('span', null, ms(span))), rows);
}

export function runView(app: App, runId: string): View {
  const body = h('div', null, empty('Loading…'));
  const el = h('div', { class: 'page' }, h('p', { class: 'crumbs' }, link('#/runs', 'runs')), h('h1', null, runId), body);
  let limit = 500;
  let tick: number | undefined;
  const load = async (): Promise<void> => {
    const run = await getJson<RunPage>(`/api/runs/${encodeURIComponent(runId)}${qs({ limit })}`);
    const failures = run.stages.filter((s) => s.status === 'failed' || s.status === 'blocked' || s.issues);
    replace(
      body,
      h(
        'div',
        { class: 'page-head' },
        h(
          'p',
          null,
          chip(run.row.status),
          ' ',
          link(route('pipelines', run.row.pipeline), run.row.pipeline),
          ` · started ${when(run.row.startedAt)} · ${ms(run.row.durationMs)} · ${countsText(run.row.counts)}`,
        ),
        workersText(run.stages) ? h('p', { class: 'muted small', dataset: { workers: '' } }, workersText(run.stages)) : null,
        app.overview.actions && run.row.status === 'running'
          ? h(
              'div',
              { class: 'actions' },
              h(
                'button',
                {
                  on: {
                    click: () =>
                      void postJson<{ message: string }>('/api/actions/abort', { runId }).then(
                        (r) => app.toast(r.message, 'ok'),
                        (e: Error) => app.toast(e.message, 'error'),
                      ),
                  },
                },
                'Abort run',
              ),
            )
          : null,
      ),
      Object.keys(run.params).length
        ? h('details', null, h('summary', null, 'params'), h('pre', { class: 'code' }, JSON.stringify(run.params, null, 2)))
        : null,
      failures.length
        ? section(
            'Failures',
            failures.map((s) =>
              h(
                'div',
                { class: 'failure' },
                h(
                  'p',
                  null,
                  chip(s.status),
                  ' ',
                  link(route('pipelines', run.row.pipeline, 'stage', s.id), s.id),
                  s.reason ? `: ${s.reason}` : '',
                ),
                s.issues ? issuesTable(s.issues) : null,
              ),
            ),
          )
        : null,
      section(
        'Timeline',
        run.stages.length ? gantt(run, run.row.pipeline) : empty('No stage ran (everything was up to date).'),
        run.totalStages > run.stages.length
          ? h('button', { on: { click: () => ((limit += 2000), void load()) } }, `show more (${run.stages.length} of ${run.totalStages})`)
          : null,
      ),
      run.loops.length
        ? section(
            'Loops',
            table(
              ['loop', 'iteration', 'decision'],
              run.loops.map((l) => [l.loop, String(l.iteration), l.decision]),
            ),
          )
        : null,
    );
    window.clearTimeout(tick);
    // While it runs, the running bars grow.
    if (run.row.status === 'running') tick = window.setTimeout(() => void load().catch(() => undefined), 1000);
  };
  void load().catch((e: Error) => replace(body, errorBox(e.message)));
  const refresh = throttle(() => void load().catch(() => undefined), 300);
  return {
    el,
    title: runId,
    onLive: (m) => m.kind === 'run-event' && m.event.runId === runId && m.event.type !== 'stage-log' && refresh(),
    reload: () => void load(),
    dispose: () => window.clearTimeout(tick),
  };
}

export function compareView(_app: App, a: string, b: string): View {
  const body = h('div', null, empty('Loading…'));
  const el = h(
    'div',
    { class: 'page' },
    h('p', { class: 'crumbs' }, link('#/runs', 'runs'), ' / compare'),
    h('h1', null, `${a} ↔ ${b}`),
    body,
  );
  void Promise.all([
    getJson<RunPage>(`/api/runs/${encodeURIComponent(a)}?limit=5000`),
    getJson<RunPage>(`/api/runs/${encodeURIComponent(b)}?limit=5000`),
  ])
    .then(([ra, rb]) => {
      const left = new Map(ra.stages.map((s) => [s.id, s]));
      const right = new Map(rb.stages.map((s) => [s.id, s]));
      const ids = [...new Set([...left.keys(), ...right.keys()])].sort();
      const rows = ids.map((id) => {
        const x = left.get(id);
        const y = right.get(id);
        const changed = x?.status !== y?.status;
        return { id, x, y, changed };
      });
      rows.sort((p, q) => Number(q.changed) - Number(p.changed) || p.id.localeCompare(q.id));
      replace(
        body,
        h('p', { class: 'muted' }, `${ra.row.pipeline}: ${rows.filter((r) => r.changed).length} of ${rows.length} stages changed outcome`),
        table(
          ['stage', a, 'duration', b, 'duration', 'Δ duration'],
          rows.map((r) => [
            r.id,
            r.x ? chip(r.x.status) : '–',
            ms(r.x?.durationMs),
            r.y ? chip(r.y.status) : '–',
            ms(r.y?.durationMs),
            r.x?.durationMs != null && r.y?.durationMs != null
              ? `${r.y.durationMs - r.x.durationMs >= 0 ? '+' : ''}${ms(r.y.durationMs - r.x.durationMs)}`
              : '',
          ]),
          { rowClass: (i) => (rows[i]?.changed ? 'changed' : '') },
        ),
      );
    })
    .catch((e: Error) => replace(body, errorBox(e.message)));
  return { el, title: 'compare runs' };
}
