/// <reference lib="dom" />
// Charts: uPlot (small, fast on thousands of points, canvas) for lines over runs and rounds; plain
// DOM bars for counts.
import { h } from './dom.ts';

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563', '#65a30d', '#b45309'];

export function color(i: number): string {
  return PALETTE[i % PALETTE.length] as string;
}

export interface LineSeries {
  label: string;
  values: Array<number | null>;
}

/** A line chart; x is 1..n (or the given labels' positions) with an optional tick formatter. */
export function lineChart(options: {
  title: string;
  x: number[];
  xName?: string;
  series: LineSeries[];
  xLabel?: (x: number) => string;
  yLabel?: string;
  height?: number;
  width?: number;
  points?: boolean;
}): HTMLElement {
  const box = h('div', { class: 'chart', attrs: { 'data-chart': options.title } });
  const width = options.width ?? 520;
  const uPlot = window.uPlot;
  const data = [options.x, ...options.series.map((s) => s.values)] as unknown as ConstructorParameters<typeof uPlot>[1];
  const xFormat = options.xLabel;
  new uPlot(
    {
      title: options.title,
      width,
      height: options.height ?? 240,
      scales: { x: { time: false } },
      axes: [
        { ...(xFormat ? { values: (_u: unknown, ticks: number[]) => ticks.map((t) => (Number.isInteger(t) ? xFormat(t) : '')) } : {}) },
        { label: options.yLabel ?? '' },
      ],
      series: [
        { label: options.xName ?? 'x' },
        ...options.series.map((s, i) => ({
          label: s.label,
          stroke: color(i),
          width: 2,
          points: { show: options.points ?? options.x.length < 40, size: 6 },
        })),
      ],
    },
    data,
    box,
  );
  return box;
}

/** Horizontal bars for a few labelled counts. */
export function barList(title: string, entries: Array<[string, number]>): HTMLElement {
  const max = Math.max(1, ...entries.map(([, n]) => n));
  return h(
    'div',
    { class: 'bars', attrs: { 'data-chart': title } },
    h('h3', null, title),
    entries.map(([label, n], i) =>
      h(
        'div',
        { class: 'bar-row' },
        h('span', { class: 'bar-label' }, label),
        h('span', { class: 'bar', attrs: { style: `width:${Math.max(2, (n / max) * 100)}%;background:${color(i)}` } }),
        h('span', { class: 'bar-value' }, String(n)),
      ),
    ),
  );
}
