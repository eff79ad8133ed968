/// <reference lib="dom" />
// MassGen experiments, live: the grid of each experiments pipeline (configs × questions × repeats)
// on the MassGen page, each cell following its stage's events (state, phase, fraction, agents;
// the winner once done) and linking to its run's live page and its report; and the live page of
// one MassGen run: the phase, each agent's status and the text each agent has written so far,
// growing as MassGen writes it. Agent text only ever becomes text nodes.
import { getJson, qs } from '../api.ts';
import type { App, View } from '../app.ts';
import { throttle } from '../app.ts';
import { chip, empty, errorBox, h, link, ms, replace, route, section } from '../dom.ts';
import type { LiveMessage } from '../live.ts';
import type { ExperimentCell, ExperimentGrid } from '../../src/ui/data/experiments.ts';
import type { LiveRunView, OutputPiece } from '../../src/ui/data/massgen-live.ts';
import { logDirOf, parseProgressLine } from '../../src/workflows/massgen/experiments/progress-line.ts';

const END_STATE: Record<string, ExperimentCell['state']> = {
  succeeded: 'up-to-date',
  fresh: 'up-to-date',
  failed: 'failed',
  blocked: 'blocked',
  skipped: 'skipped',
  aborted: 'stale',
};

export function liveHref(dir: string): string {
  return route('massgen', 'live', dir);
}

function percent(fraction: number | null): string {
  return `${Math.round((fraction ?? 0) * 100)}%`;
}

function progressBar(fraction: number | null): HTMLElement {
  const fill = h('div', { class: 'bar-fill' });
  fill.style.width = percent(fraction);
  return h('div', { class: 'bar', attrs: { role: 'progressbar', 'aria-valuenow': Math.round((fraction ?? 0) * 100) } }, fill);
}

function cellBody(pipeline: string, c: ExperimentCell): HTMLElement[] {
  const running = c.state === 'running';
  const line = running
    ? h('div', { class: 'exp-phase' }, c.phase ?? 'starting', ' · ', percent(c.fraction))
    : c.winner
      ? h(
          'div',
          { class: 'exp-phase' },
          'winner ',
          h('b', { class: 'exp-winner' }, c.winner),
          c.durationMs !== null ? ` · ${ms(c.durationMs)}` : '',
        )
      : h('div', { class: 'exp-phase muted' }, c.failure ?? (c.state === 'never-run' ? 'not run yet' : '–'));
  return [
    h('div', { class: 'exp-head' }, h('span', { class: 'exp-repeat' }, `#${c.repeat}`), chip(c.state)),
    line,
    running ? progressBar(c.fraction) : null,
    running && c.agents.length
      ? h(
          'div',
          { class: 'exp-agents small' },
          c.agents.map((a) => h('span', { class: 'exp-agent', title: `${a.id}: ${a.status}` }, chip(a.status, a.id))),
        )
      : null,
    h(
      'div',
      { class: 'exp-links small' },
      c.logDir ? h('a', { class: 'exp-live', href: liveHref(c.logDir) }, running ? 'live' : 'outputs') : null,
      c.turnDir ? h('a', { class: 'exp-report', href: route('massgen', 'turn', c.turnDir) }, 'report') : null,
      h('a', { class: 'exp-stage', href: route('pipelines', pipeline, 'stage', c.stage) }, 'stage'),
    ),
  ].filter((x): x is HTMLElement => x !== null);
}

/** The experiment grids, for the MassGen page: empty (no element shown) when the project has none. */
export function experimentGrids(_app: App): { el: HTMLElement; onLive(m: LiveMessage): void; reload(): void } {
  const box = h('div', { class: 'experiments' });
  const el = h('div', { class: 'experiments-section', attrs: { hidden: true } }, section('Experiments', box));
  const cells = new Map<string, { pipeline: string; cell: ExperimentCell; el: HTMLElement }>();
  let pipelines = new Set<string>();

  const draw = (key: string): void => {
    const entry = cells.get(key);
    if (!entry) return;
    entry.el.dataset.state = entry.cell.state;
    replace(entry.el, cellBody(entry.pipeline, entry.cell));
  };

  const render = (grids: ExperimentGrid[]): void => {
    cells.clear();
    pipelines = new Set(grids.map((g) => g.pipeline));
    el.hidden = grids.length === 0;
    replace(
      box,
      grids.map((g) => {
        const count = (s: string): number => g.cells.filter((c) => c.state === s).length;
        const done = g.cells.filter((c) => c.ok === true).length;
        const byPlace = new Map(g.cells.map((c) => [`${c.config}\0${c.question}\0${c.repeat}`, c]));
        return h(
          'div',
          { class: 'exp-grid', dataset: { pipeline: g.pipeline } },
          h(
            'h3',
            null,
            link(route('pipelines', g.pipeline), g.pipeline),
            h(
              'span',
              { class: 'muted small' },
              ` ${g.configs.length} config${g.configs.length === 1 ? '' : 's'} × ${g.questions.length} question${g.questions.length === 1 ? '' : 's'} × ${g.repeats.length} repeat${g.repeats.length === 1 ? '' : 's'} · ${done} done, ${count('running')} running, ${count('failed')} failed`,
            ),
          ),
          h(
            'table',
            { class: 'grid exp-table' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', null, 'config \\ question'),
                g.questions.map((q) => h('th', { class: 'exp-question', title: q }, q)),
              ),
            ),
            h(
              'tbody',
              null,
              g.configs.map((config) =>
                h(
                  'tr',
                  null,
                  h('th', { class: 'exp-config', title: config }, config),
                  g.questions.map((question) =>
                    h(
                      'td',
                      null,
                      h(
                        'div',
                        { class: 'exp-cells' },
                        g.repeats.map((repeat) => {
                          const cell = byPlace.get(`${config}\0${question}\0${repeat}`);
                          if (!cell) return null;
                          const cellEl = h('div', { class: 'exp-cell', dataset: { stage: cell.stage, state: cell.state } });
                          const key = `${g.pipeline}\0${cell.stage}`;
                          cells.set(key, { pipeline: g.pipeline, cell, el: cellEl });
                          draw(key);
                          return cellEl;
                        }),
                      ),
                    ),
                  ),
                ),
              ),
            ),
          ),
        );
      }),
    );
  };

  const load = async (): Promise<void> => render((await getJson<{ grids: ExperimentGrid[] }>('/api/massgen/experiments')).grids);
  const refresh = throttle(() => void load().catch(() => undefined), 500);
  void load().catch((e: Error) => {
    el.hidden = false;
    replace(box, errorBox(e.message));
  });

  const onLive = (m: LiveMessage): void => {
    if (m.kind !== 'run-event') return;
    const e = m.event;
    if (e.type === 'run-end' && pipelines.has(e.pipeline)) return refresh();
    const key = `${e.pipeline}\0${e.stage ?? ''}`;
    const entry = cells.get(key);
    if (!entry) {
      // A stage no grid has: maybe a cell of a grid not shown yet (a first run, new params), or a
      // check[...] that failed its cell. The server knows which stages are cells.
      if (e.type === 'stage-start' || e.type === 'stage-end') refresh();
      return;
    }
    const c = entry.cell;
    if (e.type === 'stage-start') {
      Object.assign(c, {
        state: 'running',
        fraction: 0,
        phase: 'starting',
        agents: [],
        winner: null,
        turnDir: null,
        ok: null,
        failure: null,
      });
      c.runId = e.runId;
    } else if (e.type === 'stage-progress') {
      const line = parseProgressLine(e.message ?? '');
      Object.assign(c, { state: 'running', fraction: e.fraction ?? 0, phase: line.phase, agents: line.agents });
    } else if (e.type === 'stage-log') {
      const dir = logDirOf(e.message ?? '');
      if (!dir) return;
      c.logDir = dir;
    } else if (e.type === 'stage-end') {
      c.state = END_STATE[e.status ?? ''] ?? 'stale';
      c.fraction = null;
      // The winner and the report come from the experiment.json the stage just wrote.
      refresh();
    } else return;
    draw(key);
  };
  return { el, onLive, reload: refresh };
}

const POLL_MS = 1000;
/** What a page keeps of one agent's text: the newest part, past it the start is dropped. */
const KEEP_CHARS = 2_000_000;

/** One MassGen run as it goes on (MassGen's own Web UI shows the same): phase, agents, their output. */
export function liveRunView(_app: App, dir: string): View {
  const head = h('div', null, empty('Loading…'));
  const agentsBox = h('div');
  const outputsBox = h('div', { class: 'agent-outputs' });
  const el = h(
    'div',
    { class: 'page live-run' },
    h('p', { class: 'crumbs' }, link('#/massgen', 'MassGen'), ' / live'),
    head,
    section('Agents', agentsBox),
    section('Agent outputs', outputsBox),
  );
  const files = new Map<string, { next: number; pre: HTMLElement; size: HTMLElement }>();
  let attemptDir = '';
  let timer: number | undefined;
  let disposed = false;
  let busy = false;

  const readOutput = async (file: string): Promise<void> => {
    const state = files.get(file);
    if (!state) return;
    for (let i = 0; i < 16; i += 1) {
      const piece = await getJson<OutputPiece>(`/api/massgen/live/output${qs({ dir: attemptDir, file, offset: state.next })}`);
      if (piece.offset < state.next) replace(state.pre); // the file was rewritten: from its start again
      if (piece.text) state.pre.appendChild(document.createTextNode(piece.text));
      const text = state.pre.textContent ?? '';
      if (text.length > KEEP_CHARS) state.pre.textContent = text.slice(text.length - KEEP_CHARS);
      state.next = piece.next;
      state.size.textContent = `${piece.next} of ${piece.size} bytes`;
      if (piece.next >= piece.size || piece.next === piece.offset) break;
    }
  };

  const load = async (): Promise<void> => {
    if (busy || disposed) return;
    busy = true;
    try {
      const data = await getJson<LiveRunView>(`/api/massgen/live${qs({ dir })}`);
      if (data.attemptDir !== attemptDir) {
        // A new attempt (MassGen restarted the turn): its outputs start afresh.
        attemptDir = data.attemptDir;
        files.clear();
        replace(outputsBox);
      }
      const s = data.status;
      replace(
        head,
        h(
          'h1',
          null,
          `${data.session}${data.turn !== null ? ` · turn ${data.turn}` : ''}${data.attempt !== null ? ` · attempt ${data.attempt}` : ''}`,
        ),
        h(
          'div',
          { class: 'page-head live-head' },
          s
            ? h(
                'p',
                null,
                chip(s.complete ? 'completed' : 'running', s.complete ? 'finished' : 'running'),
                ' phase ',
                h('b', { class: 'live-phase' }, s.phase),
                ` · ${percent(s.fraction)}`,
                s.winner ? [' · winner ', h('b', null, s.winner)] : null,
                s.finishReason && s.finishReason !== 'in_progress' ? ` · ${s.finishReason}` : null,
              )
            : h('p', { class: 'muted' }, 'No status.json yet: MassGen writes it every 2 s once the run has started.'),
          s && !s.complete ? progressBar(s.fraction) : null,
          data.turnDir ? h('p', null, link(route('massgen', 'turn', data.turnDir), 'the turn’s report and answers')) : null,
        ),
      );
      replace(
        agentsBox,
        s?.agents.length
          ? h(
              'table',
              { class: 'grid live-agents' },
              h('thead', null, h('tr', null, h('th', null, 'agent'), h('th', null, 'status'), h('th', null, 'error'))),
              h(
                'tbody',
                null,
                s.agents.map((a) =>
                  h(
                    'tr',
                    { dataset: { agent: a.id } },
                    h('td', null, a.id),
                    h('td', null, chip(a.status)),
                    h('td', { class: 'error-text' }, a.error ?? ''),
                  ),
                ),
              ),
            )
          : empty('No agent status yet.'),
      );
      for (const o of data.outputs) {
        if (files.has(o.file)) continue;
        const pre = h('pre', { class: 'agent-output', dataset: { file: o.file } });
        const size = h('span', { class: 'muted small' });
        files.set(o.file, { next: 0, pre, size });
        outputsBox.appendChild(h('article', { class: 'agent-output-box' }, h('header', null, h('b', null, o.file), ' ', size), pre));
      }
      if (data.outputs.length === 0 && files.size === 0) replace(outputsBox, empty('No agent output yet (agent_outputs/).'));
      for (const o of data.outputs) if ((files.get(o.file)?.next ?? 0) !== o.bytes) await readOutput(o.file);
      window.clearTimeout(timer);
      // Until MassGen says it is done (and a little after, for the last lines), look again.
      if (!disposed && !(s?.complete && data.outputs.every((o) => files.get(o.file)?.next === o.bytes)))
        timer = window.setTimeout(() => void load().catch(() => undefined), POLL_MS);
    } finally {
      busy = false;
    }
  };
  void load().catch((e: Error) => replace(head, errorBox(e.message)));
  const soon = throttle(() => void load().catch(() => undefined), 250);
  return {
    el,
    title: `live ${dir}`,
    // A cell's progress event says its status.json changed: look now rather than at the next poll.
    onLive: (m) => m.kind === 'run-event' && m.event.type === 'stage-progress' && soon(),
    reload: () => void load().catch(() => undefined),
    dispose: () => {
      disposed = true;
      window.clearTimeout(timer);
    },
  };
}
