/// <reference lib="dom" />
// DOM helpers. Text from the server (agents' answers, logs, artifact contents) only ever becomes a
// text node here: `h` has no way to set innerHTML, and attributes named on* are refused.

export type Child = Node | string | number | null | undefined | false | Child[];

export interface Props {
  class?: string;
  title?: string;
  href?: string;
  id?: string;
  on?: Partial<Record<keyof HTMLElementEventMap, (event: Event) => void>>;
  attrs?: Record<string, string | number | boolean | undefined>;
  dataset?: Record<string, string>;
}

function append(el: Node, child: Child): void {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) {
    for (const c of child) append(el, c);
    return;
  }
  el.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    if (props.class) el.className = props.class;
    if (props.title) el.title = props.title;
    if (props.id) el.id = props.id;
    if (props.href !== undefined) el.setAttribute('href', props.href);
    for (const [name, value] of Object.entries(props.attrs ?? {})) {
      if (/^on/i.test(name) || value === undefined || value === false) continue;
      el.setAttribute(name, value === true ? '' : String(value));
    }
    for (const [name, value] of Object.entries(props.dataset ?? {})) el.dataset[name] = value;
    for (const [name, handler] of Object.entries(props.on ?? {})) if (handler) el.addEventListener(name, handler as EventListener);
  }
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs)) if (!/^on/i.test(name)) el.setAttribute(name, String(value));
  append(el, children);
  return el;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function replace(el: Element, ...children: Child[]): void {
  clear(el);
  append(el, children);
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  if (value < 1000) return `${Math.round(value)} ms`;
  const s = value / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${Math.round(s % 60)}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function seconds(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : ms(value * 1000);
}

export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return value === 0 ? '$0' : value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
}

export function chip(state: string, text = state): HTMLElement {
  return h('span', { class: `chip state-${state.replace(/[^a-z-]/g, '')}` }, text);
}

export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href }, ...children);
}

/** A hash route with its parts encoded: route('pipelines', name, 'stage', id). */
export function route(...parts: string[]): string {
  return `#/${parts.map((p) => encodeURIComponent(p)).join('/')}`;
}

export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card' }, h('h2', null, title), ...children);
}

export function empty(text: string): HTMLElement {
  return h('p', { class: 'empty' }, text);
}

export function errorBox(text: string): HTMLElement {
  return h('pre', { class: 'error-box' }, text);
}

/** A table from rows; cells are children (text or nodes). */
export function table(
  head: string[],
  rows: Child[][],
  options: { class?: string; rowClass?: (i: number) => string; rowId?: (i: number) => string } = {},
): HTMLTableElement {
  return h(
    'table',
    { class: options.class ?? 'grid' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        head.map((c) => h('th', null, c)),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map((cells, i) =>
        h(
          'tr',
          { class: options.rowClass?.(i) ?? '', ...(options.rowId ? { id: options.rowId(i) } : {}) },
          cells.map((c) => h('td', null, c)),
        ),
      ),
    ),
  );
}
