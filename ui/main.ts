/// <reference lib="dom" />
// The dashboard's shell: the hash router (every view has a stable address), the live stream, the
// banner shown while it is down, the command palette (Ctrl/Cmd+K) and the keys (? for help).
import { getJson } from './api.ts';
import type { App, Overview, View } from './app.ts';
import { clear, errorBox, h, replace, route } from './dom.ts';
import { LiveClient } from './live.ts';
import { pipelinesView, pipelineView, stageView } from './pages/pipelines.ts';
import { compareView, runsView, runView } from './pages/runs.ts';
import { massgenView, turnView } from './pages/massgen.ts';
import { liveRunView } from './pages/experiments.ts';
import { refineListView, refineView } from './pages/refine.ts';
import { jobsView, jobView } from './pages/jobs.ts';
import { fileView } from './pages/file.ts';

const SECTIONS: Array<[string, string, string]> = [
  ['1', 'Pipelines', '#/'],
  ['2', 'Runs', '#/runs'],
  ['3', 'MassGen', '#/massgen'],
  ['4', 'Refine', '#/refine'],
  ['5', 'Jobs', '#/jobs'],
];

function parseHash(): { parts: string[]; query: URLSearchParams } {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = raw.split('?', 2);
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  return { parts, query: new URLSearchParams(search) };
}

function helpView(): View {
  const keys: Array<[string, string]> = [
    ['Ctrl/Cmd + K', 'open the palette: jump to any pipeline, stage, run, session'],
    ['1 … 5', 'Pipelines, Runs, MassGen, Refine, Jobs'],
    ['j / k', 'next / previous row of a table; Enter opens it'],
    ['/', 'focus the filter of the page'],
    ['arrow keys', 'move between boxes of a pipeline graph (click it first); Enter opens'],
    ['Ctrl + wheel, drag', 'zoom and pan a pipeline graph'],
    ['?', 'this help'],
  ];
  const el = h(
    'div',
    { class: 'page' },
    h('h1', null, 'Keys'),
    h(
      'table',
      { class: 'grid' },
      h(
        'tbody',
        null,
        keys.map(([k, v]) => h('tr', null, h('td', null, h('kbd', null, k)), h('td', null, v))),
      ),
    ),
    h(
      'p',
      { class: 'muted' },
      'Every page has its own address: copy it to share the exact view (filters and sorting included) with anyone holding the dashboard token.',
    ),
  );
  return { el, title: 'Help' };
}

function viewFor(app: App, parts: string[]): View {
  const [head, a, b, c] = parts;
  switch (head) {
    case undefined:
    case 'pipelines':
      if (a && b === 'stage' && c !== undefined) return stageView(app, a, c);
      if (a) return pipelineView(app, a);
      return pipelinesView(app);
    case 'runs':
      if (a === 'compare' && b && c) return compareView(app, b, c);
      if (a) return runView(app, a);
      return runsView(app);
    case 'massgen':
      if (a === 'turn' && b) return turnView(app, b);
      if (a === 'live' && b) return liveRunView(app, b);
      return massgenView(app);
    case 'refine':
      return a ? refineView(app, a) : refineListView(app);
    case 'jobs':
      return a && b ? jobView(app, a, b) : jobsView(app);
    case 'file':
      return fileView(app, a ?? '');
    case 'help':
      return helpView();
    default:
      return { el: h('div', { class: 'page' }, errorBox(`No page here: ${location.hash}`)), title: 'Not found' };
  }
}

function palette(overview: Overview): void {
  const input = h('input', {
    attrs: { type: 'search', placeholder: 'jump to… (pipeline, stage, run, MassGen session, refine session)', 'aria-label': 'palette' },
  });
  const list = h('ul', { class: 'palette-list' });
  const overlay = h(
    'div',
    { class: 'overlay', on: { click: (e) => e.target === overlay && overlay.remove() } },
    h('div', { class: 'palette' }, input, list),
  );
  const entries: Array<[string, string]> = [
    ...SECTIONS.map(([, label, href]): [string, string] => [label, href]),
    ...overview.pipelines.map((p): [string, string] => [`pipeline ${p}`, route('pipelines', p)]),
  ];
  let index = 0;
  const extra: Array<[string, string]> = [];
  void Promise.all([
    getJson<{ rows: Array<{ runId: string; pipeline: string; status: string }> }>('/api/runs?limit=50').then((r) =>
      r.rows.forEach((x) => extra.push([`run ${x.runId} ${x.pipeline} ${x.status}`, route('runs', x.runId)])),
    ),
    getJson<{ rows: Array<{ session: string; turns: Array<{ turn: number; dir: string }> }> }>('/api/massgen/sessions?limit=100').then(
      (r) =>
        r.rows.forEach((s) => s.turns.forEach((t) => extra.push([`massgen ${s.session} turn ${t.turn}`, route('massgen', 'turn', t.dir)]))),
    ),
    getJson<{ sessions: Array<{ session: string }> }>('/api/refine/sessions').then((r) =>
      r.sessions.forEach((s) => extra.push([`refine ${s.session}`, route('refine', s.session)])),
    ),
  ])
    .catch(() => undefined)
    .finally(() => show());
  const matches = (): Array<[string, string]> => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    return [...entries, ...extra].filter(([label]) => words.every((w) => label.toLowerCase().includes(w))).slice(0, 30);
  };
  const show = (): void => {
    const found = matches();
    index = Math.min(index, Math.max(0, found.length - 1));
    replace(
      list,
      found.map(([label, href], i) =>
        h('li', { class: i === index ? 'active' : '' }, h('a', { href, on: { click: () => overlay.remove() } }, label)),
      ),
    );
  };
  input.addEventListener('input', () => {
    index = 0;
    show();
  });
  input.addEventListener('keydown', (e) => {
    const found = matches();
    if (e.key === 'ArrowDown') index = Math.min(found.length - 1, index + 1);
    else if (e.key === 'ArrowUp') index = Math.max(0, index - 1);
    else if (e.key === 'Enter' && found[index]) {
      location.hash = (found[index] as [string, string])[1];
      overlay.remove();
      return;
    } else if (e.key === 'Escape') {
      overlay.remove();
      return;
    } else return;
    e.preventDefault();
    show();
  });
  document.body.appendChild(overlay);
  input.focus();
}

function moveRow(step: number): void {
  const rows = [...document.querySelectorAll<HTMLTableRowElement>('#view table.grid tbody tr')];
  if (rows.length === 0) return;
  const current = rows.findIndex((r) => r.classList.contains('cursor'));
  const next = Math.max(0, Math.min(rows.length - 1, current < 0 ? 0 : current + step));
  rows[current]?.classList.remove('cursor');
  rows[next]?.classList.add('cursor');
  rows[next]?.scrollIntoView({ block: 'nearest' });
}

function keys(overview: Overview): void {
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      if (!document.querySelector('.overlay')) palette(overview);
      return;
    }
    const target = e.target as HTMLElement;
    if (e.ctrlKey || e.metaKey || e.altKey || target.closest('input, textarea, select, .dag')) return;
    const section = SECTIONS.find(([key]) => key === e.key);
    if (section) location.hash = section[2];
    else if (e.key === '?') location.hash = '#/help';
    else if (e.key === 'j') moveRow(1);
    else if (e.key === 'k') moveRow(-1);
    else if (e.key === 'Enter') document.querySelector<HTMLAnchorElement>('#view tr.cursor a')?.click();
    else if (e.key === '/') {
      const filter = document.querySelector<HTMLInputElement>('#view input[type=search]');
      if (filter) {
        e.preventDefault();
        filter.focus();
      }
    }
  });
}

async function start(): Promise<void> {
  const viewRoot = document.getElementById('view') as HTMLElement;
  const banner = document.getElementById('banner') as HTMLElement;
  const toasts = h('div', { class: 'toasts' });
  document.body.appendChild(toasts);
  let overview: Overview;
  try {
    overview = await getJson<Overview>('/api/overview');
  } catch (error) {
    replace(viewRoot, errorBox(`The dashboard's server did not answer: ${(error as Error).message}`));
    return;
  }
  const nav = document.getElementById('nav') as HTMLElement;
  replace(
    nav,
    SECTIONS.map(([key, label, href]) => h('a', { href, title: `${label} (${key})`, dataset: { section: label.toLowerCase() } }, label)),
    h(
      'span',
      { class: 'nav-right muted small' },
      overview.project,
      overview.mode === 'watch' ? ' · watch' : '',
      overview.actions ? ' · actions on' : ' · read-only',
      ' · ',
      h('a', { href: '#/help' }, '?'),
    ),
  );
  const live = new LiveClient(overview.seq, (text) => {
    banner.hidden = text === null;
    banner.textContent = text ?? '';
  });
  let current: View | undefined;
  const app: App = {
    live,
    overview,
    query: new URLSearchParams(),
    setQuery(values) {
      const { parts } = parseHash();
      const search = new URLSearchParams();
      for (const [k, v] of Object.entries(values)) if (v !== undefined && v !== '') search.set(k, String(v));
      const text = search.toString();
      history.replaceState(null, '', `#/${parts.map(encodeURIComponent).join('/')}${text ? `?${text}` : ''}`);
      app.query = search;
    },
    toast(text, kind = 'ok') {
      const t = h('div', { class: `toast toast-${kind}` }, text);
      toasts.appendChild(t);
      window.setTimeout(() => t.remove(), kind === 'error' ? 9000 : 4000);
    },
  };
  live.on((m) => current?.onLive?.(m));
  live.onReset(() => current?.reload?.());
  const show = (): void => {
    current?.dispose?.();
    const { parts, query } = parseHash();
    app.query = query;
    current = viewFor(app, parts);
    document.title = `${current.title} · refinery`;
    for (const a of nav.querySelectorAll('a[data-section]'))
      a.classList.toggle(
        'active',
        (a.getAttribute('href') ?? '') === `#/${parts[0] ?? ''}` ||
          (parts[0] === undefined && a.getAttribute('href') === '#/') ||
          (parts[0] === 'pipelines' && a.getAttribute('href') === '#/'),
      );
    clear(viewRoot);
    viewRoot.appendChild(current.el);
    window.scrollTo(0, 0);
  };
  window.addEventListener('hashchange', show);
  keys(overview);
  show();
  // For tests and the bench: the page is wired up.
  document.documentElement.dataset.ready = 'true';
  (window as unknown as { refineryLive: LiveClient }).refineryLive = live;
}

void start();
