/// <reference lib="dom" />
// Side-by-side line diff of two texts (answers, critiques): longest common subsequence of lines.
import { h } from './dom.ts';

type Op = { kind: 'same' | 'left' | 'right'; text: string };

const MAX_LINES = 3000;

export function diffLines(a: string, b: string): Op[] {
  const x = a.split('\n').slice(0, MAX_LINES);
  const y = b.split('\n').slice(0, MAX_LINES);
  const n = x.length;
  const m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      (lcs[i] as Uint32Array)[j] =
        x[i] === y[j]
          ? ((lcs[i + 1] as Uint32Array)[j + 1] as number) + 1
          : Math.max((lcs[i + 1] as Uint32Array)[j] as number, (lcs[i] as Uint32Array)[j + 1] as number);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      ops.push({ kind: 'same', text: x[i] as string });
      i += 1;
      j += 1;
    } else if (((lcs[i + 1] as Uint32Array)[j] as number) >= ((lcs[i] as Uint32Array)[j + 1] as number))
      ops.push({ kind: 'left', text: x[i++] as string });
    else ops.push({ kind: 'right', text: y[j++] as string });
  }
  while (i < n) ops.push({ kind: 'left', text: x[i++] as string });
  while (j < m) ops.push({ kind: 'right', text: y[j++] as string });
  return ops;
}

export function diffView(leftTitle: string, left: string, rightTitle: string, right: string): HTMLElement {
  const ops = diffLines(left, right);
  const l = h('pre', { class: 'diff-side' });
  const r = h('pre', { class: 'diff-side' });
  for (const op of ops) {
    if (op.kind !== 'right') l.appendChild(h('span', { class: `diff-line ${op.kind === 'left' ? 'removed' : ''}` }, `${op.text}\n`));
    else l.appendChild(h('span', { class: 'diff-line pad' }, '\n'));
    if (op.kind !== 'left') r.appendChild(h('span', { class: `diff-line ${op.kind === 'right' ? 'added' : ''}` }, `${op.text}\n`));
    else r.appendChild(h('span', { class: 'diff-line pad' }, '\n'));
  }
  return h('div', { class: 'diff' }, h('div', null, h('h3', null, leftTitle), l), h('div', null, h('h3', null, rightTitle), r));
}
