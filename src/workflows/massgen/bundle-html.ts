// One self-contained HTML file: the bundle's data as JSON, the browser libraries it needs
// (marked, DOMPurify, mermaid) and its own script, all inline, so it opens with no network.
// The Content-Security-Policy allows no request at all (default-src 'none').
import { BUNDLE_CLIENT_JS } from './bundle-client.ts';
import type { BundleData } from './bundle-data.ts';

export interface BundleScripts {
  marked: string;
  purify: string;
  mermaid: string;
}

const CSP = "default-src 'none'; script-src 'unsafe-inline' data:; style-src 'unsafe-inline'; img-src data:; font-src data:";

const STYLE = `
body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 2rem; color: #1f2328; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 1rem; }
.redaction { background: #ddf4ff; padding: .5rem; }
.redaction.off { background: #ffebe9; font-weight: bold; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: .75rem; }
article.answer { border-left: 3px solid #d0d7de; padding-left: 1rem; margin-bottom: 1rem; }
article.final { border-left-color: #1a7f37; }
.mermaid { margin: 1rem 0; }
`;

/** Text for an HTML element or a double-quoted attribute. */
export function htmlText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** JSON that cannot end the <script> element it sits in: every `<` is written as \u003c. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A library as an inline script; one that holds `<script` or `</script` goes in as a data: URL instead. */
export function inlineScript(js: string): string {
  if (/<\/?script/i.test(js)) return `<script src="data:text/javascript;base64,${Buffer.from(js, 'utf8').toString('base64')}"></script>`;
  return `<script>${js}</script>`;
}

export function renderBundleHtml(data: BundleData, scripts: BundleScripts): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${htmlText(data.title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<header><h1>${htmlText(data.title)}</h1><div id="summary"></div><noscript><p>This bundle draws its content with JavaScript; the data is in the bundle-data script element.</p></noscript></header>`,
    '<main id="app"></main>',
    `<script type="application/json" id="bundle-data">${scriptJson(data)}</script>`,
    inlineScript(scripts.marked),
    inlineScript(scripts.purify),
    inlineScript(scripts.mermaid),
    inlineScript(BUNDLE_CLIENT_JS),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
