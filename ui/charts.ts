/// <reference lib="dom" />
// Charts: uPlot (small, fast on thousands of points, canvas) for lines over runs and rounds; plain
// DOM bars for counts and for scores over categories (criteria), where a line would join what is unrelated.
import { h } from './dom.ts';

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#4b5563', '#65a30d', '#b45309'];

export function color(i: number): string {
  return PALETTE[i % PALETTE.length] as string;
}

export interface LineSeries {
  label: string;
  values: Array<number | null>;
}

/** uPlot's axis font, set explicitly so the tick labels can be measured with the font they are drawn in. */
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
/** Whole-number tick steps: x is a position (1..n), so a tick between two points would have no label. */
const WHOLE_STEPS = [1, 2, 3, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000];
/** Clear space between two tick labels, in CSS pixels. */
const LABEL_GAP = 16;

let measurer: CanvasRenderingContext2D | null | undefined;

/** The widest of the labels, in CSS pixels, in the axis font. */
function widest(labels: readonly string[]): number {
  measurer ??= document.createElement('canvas').getContext('2d');
  if (!measurer) return Math.max(0, ...labels.map((l) => l.length * 7));
  measurer.font = AXIS_FONT;
  return Math.max(0, ...labels.map((l) => measurer?.measureText(l).width ?? 0));
}

/**
 * A line chart; x is 1..n (or the given labels' positions) with an optional tick formatter. Ticks
 * fall on whole positions only, at least one label's width apart, so long labels (dates) never overlap.
 */
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
  const xAxis = xFormat
    ? {
        font: AXIS_FONT,
        space: Math.max(40, Math.ceil(widest(options.x.map(xFormat))) + LABEL_GAP),
        incrs: WHOLE_STEPS,
        // Only positions that hold a point get a label (uPlot widens a one-point range past the data).
        values: (_u: unknown, ticks: number[]) => ticks.map((t) => (options.x.includes(t) ? xFormat(t) : '')),
      }
    : { font: AXIS_FONT };
  new uPlot(
    {
      title: options.title,
      width,
      height: options.height ?? 240,
      // Half a step of room at each end: the first and last labels are drawn whole, not cut by the edge.
      scales: { x: { time: false, range: (_u: unknown, min: number, max: number): [number, number] => [min - 0.5, max + 0.5] } },
      axes: [xAxis, { label: options.yLabel ?? '', font: AXIS_FONT }],
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

export interface BarGroup {
  label: string;
  /** Shown on hover (the criterion's text). */
  title?: string;
}

/**
 * Vertical bars grouped by category: one group per category (a criterion), one bar per series (a judge)
 * in series order and colour, height value/max. Scores over criteria are categorical: bars, never lines.
 */
export function groupedBars(options: {
  title: string;
  groups: BarGroup[];
  series: LineSeries[];
  max: number;
  yLabel?: string;
}): HTMLElement {
  const legend = h(
    'div',
    { class: 'legend small' },
    options.series.map((s, i) =>
      h('span', { class: 'legend-item' }, h('span', { class: 'swatch', attrs: { style: `background:${color(i)}` } }), s.label),
    ),
  );
  const stacks = options.groups.map((g, gi) =>
    h(
      'div',
      { class: 'bar-stack', attrs: { title: g.title ?? g.label } },
      options.series.map((s, si) => {
        const v = s.values[gi] ?? null;
        return h(
          'span',
          {
            class: `vbar${v === null ? ' vbar-none' : ''}`,
            dataset: { series: s.label, group: g.label, value: v === null ? '' : String(v) },
            attrs: {
              title: `${s.label} · ${g.label}: ${v ?? 'no score'}`,
              style: `height:${v === null ? 0 : Math.max(1, (v / options.max) * 100)}%;background:${color(si)}`,
            },
          },
          h('span', { class: 'vbar-value' }, v === null ? '–' : String(v)),
        );
      }),
    ),
  );
  const labels = options.groups.map((g) => h('span', { class: 'bar-group-label', attrs: { title: g.title ?? g.label } }, g.label));
  return h(
    'div',
    { class: 'chart grouped-bars', attrs: { 'data-chart': options.title } },
    h('h3', null, options.title),
    legend,
    options.yLabel ? h('p', { class: 'muted small bar-note' }, `bar height: ${options.yLabel}`) : null,
    h('div', { class: 'bar-plot', attrs: { 'aria-label': options.yLabel ?? '' } }, stacks),
    h('div', { class: 'bar-labels' }, labels),
  );
}
