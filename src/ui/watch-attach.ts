// `refinery watch --ui`: the dashboard inside the watch process. Every bus the daemon opens feeds
// the dashboard's hub directly (no file tailing: an event is on the page as soon as it is emitted),
// and its pipelines are shown with the watch's params.
import type { ActionOutcome, ActionRunner } from './actions.ts';
import { startDashboard, type Dashboard } from './dashboard.ts';

class WatchActions implements ActionRunner {
  constructor(private readonly abortRuns: () => void) {}

  run(): Promise<ActionOutcome> {
    return Promise.resolve({
      ok: false,
      status: 409,
      error:
        'this dashboard is attached to refinery watch, which runs stages as their inputs change and holds the project; stop the watch (Ctrl-C) to run stages by hand',
    });
  }

  abort(): ActionOutcome {
    this.abortRuns();
    return { ok: true, message: 'asked the watch to abort its running stages (they are left stale and run again on the next change)' };
  }
}

export interface AttachOptions {
  root: string;
  host: string;
  port: number;
  token?: string;
  allowActions: boolean;
  logsDirs?: readonly string[];
  pipelines: readonly string[];
  overrides: Readonly<Record<string, string>>;
  /** Aborts the watch's running stages (the daemon is started after the dashboard). */
  abort: () => void;
}

export function attachDashboard(options: AttachOptions): Promise<Dashboard> {
  return startDashboard({
    root: options.root,
    host: options.host,
    port: options.port,
    ...(options.token ? { token: options.token } : {}),
    allowActions: options.allowActions,
    ...(options.logsDirs ? { logsDirs: options.logsDirs } : {}),
    mode: 'watch',
    overrides: options.overrides,
    watched: options.pipelines,
    actions: new WatchActions(options.abort),
  });
}
