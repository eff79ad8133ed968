/// <reference lib="dom" />
// What every view gets: the live stream, the overview, the route's query, and a way to keep its
// filters in the address (so a link or a refresh shows the same thing).
import type { LiveClient, LiveMessage } from './live.ts';

export interface Overview {
  project: string;
  mode: 'standalone' | 'watch';
  actions: boolean;
  seq: number;
  pipelines: string[];
  logsDirs: string[];
}

export interface App {
  live: LiveClient;
  overview: Overview;
  /** The current route's query (`#/massgen?sort=cost` → sort=cost). */
  query: URLSearchParams;
  /** Rewrites the query in the address without reloading the view. */
  setQuery(values: Record<string, string | number | undefined>): void;
  toast(text: string, kind?: 'ok' | 'error'): void;
}

export interface View {
  el: HTMLElement;
  title: string;
  onLive?(message: LiveMessage): void;
  /** The stream lost messages it cannot replay: reload what is shown. */
  reload?(): void;
  dispose?(): void;
}

/** Calls `fn` at most once per `ms`, trailing (the last call always runs). */
export function throttle(fn: () => void, ms: number): () => void {
  let timer: number | undefined;
  let last = 0;
  return () => {
    if (timer !== undefined) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = window.setTimeout(() => {
      timer = undefined;
      last = Date.now();
      fn();
    }, wait);
  };
}
