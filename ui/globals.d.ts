/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The browser libraries the page loads from /vendor/ (served from the package, never a CDN).
import type uPlotClass from 'uplot';

declare global {
  interface Window {
    marked: { parse(src: string, options?: { gfm?: boolean; breaks?: boolean; async?: false }): string };
    DOMPurify: { sanitize(dirty: string, config?: Record<string, unknown>): string };
    uPlot: typeof uPlotClass;
    mermaid?: {
      initialize(config: Record<string, unknown>): void;
      render(id: string, text: string): Promise<{ svg: string }>;
    };
  }
}
