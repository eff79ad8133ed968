/// <reference lib="dom" />
// Markdown from reports and critiques: marked turns it into HTML, DOMPurify removes anything that
// could run (scripts, event handlers, javascript: links, frames, forms, styles), and only then is it
// put in the page. Mermaid blocks are drawn by Mermaid (loaded on first use, securityLevel 'strict',
// labels as SVG text) and the SVG is sanitized again before it is shown.
import { h } from './dom.ts';

let mermaidLoad: Promise<void> | undefined;
let diagrams = 0;

function loadMermaid(): Promise<void> {
  mermaidLoad ??= new Promise<void>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = '/vendor/mermaid.min.js';
    script.onload = () => {
      window.mermaid?.initialize({
        startOnLoad: false,
        securityLevel: 'strict',
        theme: 'neutral',
        htmlLabels: false,
        flowchart: { htmlLabels: false },
        fontFamily: 'inherit',
      });
      resolve();
    };
    script.onerror = () => reject(new Error('mermaid could not be loaded'));
    document.head.appendChild(script);
  });
  return mermaidLoad;
}

const PURIFY_HTML = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'iframe', 'frame', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style', 'srcset'],
};
const PURIFY_SVG = { USE_PROFILES: { svg: true, svgFilters: true }, ADD_TAGS: ['style'] };

export function sanitizeHtml(html: string): string {
  return window.DOMPurify.sanitize(html, PURIFY_HTML);
}

/** Renders Markdown into `target`; resolves once every Mermaid diagram in it is drawn (or failed). */
export async function renderMarkdown(text: string, target: HTMLElement): Promise<void> {
  const html = window.marked.parse(text, { gfm: true, async: false });
  target.classList.add('markdown');
  target.innerHTML = sanitizeHtml(html);
  for (const a of target.querySelectorAll('a[href]')) {
    a.setAttribute('rel', 'noopener noreferrer');
    if (!(a.getAttribute('href') ?? '').startsWith('#')) a.setAttribute('target', '_blank');
  }
  const blocks = [...target.querySelectorAll('pre > code.language-mermaid')];
  if (blocks.length === 0) return;
  await loadMermaid().catch(() => undefined);
  for (const code of blocks) {
    const pre = code.parentElement as HTMLElement;
    const source = code.textContent ?? '';
    const box = h('div', { class: 'mermaid-box' });
    pre.replaceWith(box);
    try {
      if (!window.mermaid) throw new Error('mermaid is not available');
      diagrams += 1;
      const { svg } = await window.mermaid.render(`mermaid-${diagrams}`, source);
      box.innerHTML = window.DOMPurify.sanitize(svg, PURIFY_SVG);
    } catch (error) {
      box.appendChild(h('pre', { class: 'mermaid-source', title: `not drawn: ${(error as Error).message}` }, source));
    }
  }
}
