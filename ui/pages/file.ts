/// <reference lib="dom" />
// A project file (an artifact, a log, an input) as text, a megabyte at a time: a 100 MB log never
// loads whole, and the page says how much of it is shown. JSON that fits in one piece is indented.
import type { App, View } from '../app.ts';
import { empty, errorBox, h, replace } from '../dom.ts';

const CHUNK = 1024 * 1024;

export function fileHref(path: string): string {
  return `/files/${path.split('/').map(encodeURIComponent).join('/')}`;
}

export function fileView(_app: App, path: string): View {
  const text = h('pre', { class: 'code file-text' });
  const status = h('p', { class: 'muted small' }, 'Loading…');
  const more = h('div');
  const el = h(
    'div',
    { class: 'page' },
    h('p', { class: 'crumbs' }, 'file'),
    h('h1', null, path),
    h('p', null, h('a', { href: fileHref(path), attrs: { target: '_blank', rel: 'noopener' } }, 'raw')),
    status,
    text,
    more,
  );
  let loaded = 0;
  let chunks = 0;
  // One decoder across pieces: a character cut by a piece boundary is completed by the next one.
  const decoder = new TextDecoder();
  const load = async (): Promise<void> => {
    const response = await fetch(`${fileHref(path)}?offset=${loaded}&length=${CHUNK}`, { credentials: 'same-origin' });
    if (!response.ok) {
      replace(
        el,
        errorBox(response.status === 404 ? `${path}: no such file in the project` : `${path}: ${response.status} ${response.statusText}`),
      );
      return;
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    const total = Number(response.headers.get('X-Total-Bytes') ?? bytes.length);
    const end = Number((response.headers.get('X-Range') ?? '').split('-')[1] ?? loaded + bytes.length);
    const body = decoder.decode(bytes, { stream: end < total });
    chunks += 1;
    let shown = body;
    if (chunks === 1 && end >= total && path.endsWith('.json')) {
      try {
        shown = JSON.stringify(JSON.parse(body), null, 2);
      } catch {
        /* not JSON after all: as it is */
      }
    }
    text.appendChild(document.createTextNode(shown));
    loaded = end;
    status.textContent =
      loaded >= total
        ? `${total} bytes`
        : `the first ${loaded} of ${total} bytes are shown (the dashboard loads files ${CHUNK / 1024 / 1024} MB at a time)`;
    replace(
      more,
      loaded < total ? h('button', { on: { click: () => void load() } }, `load the next ${Math.min(CHUNK, total - loaded)} bytes`) : null,
    );
  };
  void load().catch((e: Error) => replace(more, errorBox(e.message)));
  if (path === '') replace(el, empty('No file named.'));
  return { el, title: path };
}
