/// <reference lib="dom" />
// The pipeline DAG: dagre lays it out in a worker (cached by the graph's shape, in memory and in
// sessionStorage, so a page refresh draws at once), then it is drawn as SVG: one box per node,
// coloured by state, foreach nodes with their counts, loops and depth layers as groups. Pan with
// the mouse, zoom with the wheel, arrow keys move between nodes, Enter opens one. A failed node
// outlines everything downstream of it.
import { svg, h, clear } from './dom.ts';
import type { LayoutRequest, LayoutResult } from './layout-types.ts';

export type StageState = 'up-to-date' | 'stale' | 'running' | 'failed' | 'blocked' | 'skipped' | 'never-run';

export interface GraphNode {
  id: string;
  label: string;
  kind: 'stage' | 'foreach' | 'loop' | 'layer';
  size: number;
  counts: Partial<Record<StageState, number>>;
  state: StageState;
  members?: string[];
}

export interface FoldedGraph {
  nodes: GraphNode[];
  edges: Array<[string, string]>;
  layered: boolean;
}

let worker: Worker | undefined;
const waiting = new Map<string, Array<(r: LayoutResult) => void>>();
const memory = new Map<string, LayoutResult>();

function hash(text: string): string {
  let h1 = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h1 ^= text.charCodeAt(i);
    h1 = Math.imul(h1, 0x01000193);
  }
  return `${(h1 >>> 0).toString(36)}-${text.length.toString(36)}`;
}

function layout(request: Omit<LayoutRequest, 'key'>): Promise<LayoutResult> {
  const key = `layout:${hash(JSON.stringify(request))}`;
  const known = memory.get(key);
  if (known) return Promise.resolve(known);
  try {
    const stored = sessionStorage.getItem(key);
    if (stored) {
      const result = JSON.parse(stored) as LayoutResult;
      memory.set(key, result);
      return Promise.resolve(result);
    }
  } catch {
    /* storage unavailable */
  }
  if (!worker) {
    worker = new Worker('/assets/layout-worker.js');
    worker.onmessage = (event: MessageEvent<LayoutResult>) => {
      const result = event.data;
      memory.set(result.key, result);
      try {
        sessionStorage.setItem(result.key, JSON.stringify(result));
      } catch {
        /* full: the memory copy serves this page */
      }
      for (const resolve of waiting.get(result.key) ?? []) resolve(result);
      waiting.delete(result.key);
    };
  }
  return new Promise((resolve) => {
    const list = waiting.get(key);
    if (list) list.push(resolve);
    else {
      waiting.set(key, [resolve]);
      worker?.postMessage({ ...request, key } satisfies LayoutRequest);
    }
  });
}

function countsText(node: GraphNode): string {
  if (node.kind === 'stage') return '';
  if (node.kind === 'loop') {
    const n = Object.values(node.counts).reduce((a, b) => a + (b ?? 0), 0);
    return n > 0 ? `loop · ${n} run` : `loop · ${node.members?.length ?? 0} stages`;
  }
  const parts = [`×${node.size}`];
  for (const state of ['running', 'failed', 'stale', 'never-run'] as const)
    if (node.counts[state]) parts.push(`${node.counts[state]} ${state === 'never-run' ? 'new' : state}`);
  return parts.join(' · ');
}

function nodeSize(node: GraphNode): { width: number; height: number } {
  const text = Math.max(node.label.length, countsText(node).length * 0.85);
  return { width: Math.round(Math.min(260, Math.max(84, text * 7.2 + 26))), height: node.kind === 'stage' ? 30 : 44 };
}

export class DagView {
  readonly el: HTMLElement;
  private graph: FoldedGraph | undefined;
  private result: LayoutResult | undefined;
  private readonly boxes = new Map<string, SVGGElement>();
  private selected: string | undefined;
  private view = { x: 0, y: 0, w: 1, h: 1 };

  constructor(private readonly open: (node: GraphNode) => void) {
    this.el = h('div', { class: 'dag', attrs: { tabindex: 0, 'aria-label': 'pipeline graph: arrow keys move, Enter opens' } });
    this.el.addEventListener('keydown', (e) => this.key(e));
  }

  async show(graph: FoldedGraph): Promise<void> {
    this.graph = graph;
    const request = { rankdir: 'LR' as const, nodes: graph.nodes.map((n) => ({ id: n.id, ...nodeSize(n) })), edges: graph.edges };
    const result = await layout(request);
    if (this.graph !== graph) return;
    this.result = result;
    this.draw();
  }

  private draw(): void {
    const graph = this.graph;
    const result = this.result;
    if (!graph || !result) return;
    clear(this.el);
    this.boxes.clear();
    const width = Math.max(result.width, 200);
    const height = Math.max(result.height, 60);
    this.view = { x: 0, y: 0, w: width, h: height };
    // Drawn at its own size (never blown up); a graph wider than the page shrinks to fit, and zooms.
    const root = svg('svg', { class: 'dag-svg', viewBox: `0 0 ${width} ${height}`, width, height, preserveAspectRatio: 'xMinYMin meet' });
    root.appendChild(
      svg(
        'defs',
        {},
        svg(
          'marker',
          { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
          svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }),
        ),
      ),
    );
    const edges = svg('g', { class: 'edges' });
    for (const e of result.edges) {
      if (e.points.length === 0) continue;
      const d = e.points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
      edges.appendChild(svg('path', { d, class: 'edge', 'marker-end': 'url(#arrow)', 'data-from': e.from, 'data-to': e.to }));
    }
    root.appendChild(edges);
    const nodes = svg('g', { class: 'nodes' });
    for (const node of graph.nodes) {
      const p = result.nodes[node.id];
      if (!p) continue;
      const g = svg('g', {
        class: `node kind-${node.kind} state-${node.state}`,
        transform: `translate(${(p.x - p.width / 2).toFixed(1)},${(p.y - p.height / 2).toFixed(1)})`,
        'data-id': node.id,
        'data-state': node.state,
      });
      g.appendChild(svg('rect', { width: p.width, height: p.height, rx: node.kind === 'stage' ? 6 : 10 }));
      g.appendChild(svg('text', { x: 10, y: node.kind === 'stage' ? 19 : 18, class: 'label' }, node.label));
      if (node.kind !== 'stage') g.appendChild(svg('text', { x: 10, y: 35, class: 'counts' }, countsText(node)));
      g.appendChild(svg('title', {}, `${node.label}: ${node.state}${node.kind === 'stage' ? '' : ` (${countsText(node)})`}`));
      g.addEventListener('click', () => {
        this.select(node.id);
        this.open(node);
      });
      nodes.appendChild(g);
      this.boxes.set(node.id, g);
    }
    root.appendChild(nodes);
    this.enablePanZoom(root);
    this.el.appendChild(root);
    this.markDownstream();
  }

  /** A live state change of one node (the server recounts folded groups). */
  setState(id: string, state: StageState): boolean {
    const g = this.boxes.get(id);
    const node = this.graph?.nodes.find((n) => n.id === id);
    if (!g || !node || node.kind !== 'stage') return false;
    node.state = state;
    g.setAttribute('class', `node kind-${node.kind} state-${state}${g.classList.contains('selected') ? ' selected' : ''}`);
    g.setAttribute('data-state', state);
    const title = g.querySelector('title');
    if (title) title.textContent = `${node.label}: ${state}`;
    this.markDownstream();
    return true;
  }

  private markDownstream(): void {
    if (!this.graph) return;
    const out = new Map<string, string[]>();
    for (const [a, b] of this.graph.edges) out.set(a, [...(out.get(a) ?? []), b]);
    const hit = new Set<string>();
    const queue = this.graph.nodes.filter((n) => n.state === 'failed').map((n) => n.id);
    while (queue.length > 0) {
      const id = queue.pop() as string;
      for (const next of out.get(id) ?? [])
        if (!hit.has(next)) {
          hit.add(next);
          queue.push(next);
        }
    }
    for (const [id, g] of this.boxes) g.classList.toggle('after-failure', hit.has(id));
    for (const path of this.el.querySelectorAll('path.edge'))
      path.classList.toggle('after-failure', hit.has(path.getAttribute('data-to') ?? ''));
  }

  private select(id: string): void {
    if (this.selected) this.boxes.get(this.selected)?.classList.remove('selected');
    this.selected = id;
    this.boxes.get(id)?.classList.add('selected');
  }

  private key(e: KeyboardEvent): void {
    if (!this.result || !this.graph) return;
    const nodes = this.result.nodes;
    if (e.key === 'Enter' && this.selected) {
      const node = this.graph.nodes.find((n) => n.id === this.selected);
      if (node) this.open(node);
      return;
    }
    const dir = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    if (!dir) return;
    e.preventDefault();
    const from = this.selected ? nodes[this.selected] : undefined;
    if (!from) {
      const first = this.graph.nodes[0];
      if (first) this.select(first.id);
      return;
    }
    let best: string | undefined;
    let bestScore = Infinity;
    for (const [id, p] of Object.entries(nodes)) {
      const dx = p.x - from.x;
      const dy = p.y - from.y;
      const along = dx * (dir[0] as number) + dy * (dir[1] as number);
      if (id === this.selected || along <= 0) continue;
      const across = Math.abs(dx * (dir[1] as number)) + Math.abs(dy * (dir[0] as number));
      const score = along + across * 2;
      if (score < bestScore) {
        bestScore = score;
        best = id;
      }
    }
    if (best) this.select(best);
  }

  private enablePanZoom(root: SVGSVGElement): void {
    const apply = (): void => root.setAttribute('viewBox', `${this.view.x} ${this.view.y} ${this.view.w} ${this.view.h}`);
    root.addEventListener(
      'wheel',
      (e) => {
        if (!e.ctrlKey && !e.metaKey && !e.altKey) return;
        e.preventDefault();
        const rect = root.getBoundingClientRect();
        const fx = (e.clientX - rect.left) / rect.width;
        const fy = (e.clientY - rect.top) / rect.height;
        const factor = e.deltaY > 0 ? 1.15 : 1 / 1.15;
        const w = this.view.w * factor;
        const hgt = this.view.h * factor;
        this.view = { x: this.view.x + (this.view.w - w) * fx, y: this.view.y + (this.view.h - hgt) * fy, w, h: hgt };
        apply();
      },
      { passive: false },
    );
    let drag: { x: number; y: number; vx: number; vy: number } | undefined;
    root.addEventListener('pointerdown', (e) => {
      if ((e.target as Element).closest('.node')) return;
      drag = { x: e.clientX, y: e.clientY, vx: this.view.x, vy: this.view.y };
      root.setPointerCapture(e.pointerId);
    });
    root.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const rect = root.getBoundingClientRect();
      const scale = this.view.w / rect.width;
      this.view.x = drag.vx - (e.clientX - drag.x) * scale;
      this.view.y = drag.vy - (e.clientY - drag.y) * scale;
      apply();
    });
    root.addEventListener('pointerup', () => {
      drag = undefined;
    });
  }
}
