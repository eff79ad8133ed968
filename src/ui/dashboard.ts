// Puts the dashboard together: the stores over the project's files, the live hub (fed by the watch
// daemon's bus in-process, or by tailing the runs' event logs), the HTTP server, and the file that
// lets `refinery ui list` print the URL again.
import type { AddressInfo } from 'node:net';
import { loadUiAssets } from './assets.ts';
import { createUiServer, type ServerSecurity } from './server.ts';
import { allowedHosts, newToken } from './http-security.ts';
import { LiveHub } from './live-hub.ts';
import { RunTailer } from './run-tailer.ts';
import { RunStore } from './data/runs.ts';
import { RunTracker } from './data/run-tracker.ts';
import { PipelineStore } from './data/pipelines.ts';
import { PlanAssessor } from './data/assess.ts';
import { MassGenStore } from './data/massgen.ts';
import { ExperimentStore } from './data/experiments.ts';
import { RefineStore } from './data/refine.ts';
import { JobStore, watchJobs } from './data/jobs.ts';
import { ChildRunActions, type ActionRunner } from './actions.ts';
import { forgetServer, recordServer } from './server-list.ts';
import { defaultLogsDirs } from './logs-dirs.ts';

export interface DashboardOptions {
  root: string;
  host: string;
  /** 0: a free port. */
  port: number;
  /** Given with --token; else a fresh one. */
  token?: string;
  allowActions: boolean;
  /** Absolute MassGen logs folders, inside the project; undefined: MassGen's and the pipelines' `logs` param. */
  logsDirs?: readonly string[];
  mode: 'standalone' | 'watch';
  /** The watch's --param values: pipelines are shown with them. */
  overrides?: Readonly<Record<string, string>>;
  /** Names of the pipelines a watch runs. */
  watched?: readonly string[];
  /** What actions do when attached to a watch (the watch holds the project lock). */
  actions?: ActionRunner;
  /** The hub the watch's buses feed; standalone, one is made and fed by tailing events.jsonl. */
  hub?: LiveHub;
}

export interface Dashboard {
  url: string;
  port: number;
  token: string;
  hub: LiveHub;
  close(): Promise<void>;
}

export async function startDashboard(options: DashboardOptions): Promise<Dashboard> {
  const assets = await loadUiAssets();
  const hub = options.hub ?? new LiveHub();
  const runs = new RunStore(options.root);
  const tracker = new RunTracker();
  let pipelines: PipelineStore | undefined;
  const target = (name: string): { file: string; params: string[] } | undefined => {
    const file = pipelines?.fileOf(name);
    return file && pipelines ? { file, params: pipelines.paramsFor(name) } : undefined;
  };
  const assessor = new PlanAssessor(options.root, target);
  pipelines = new PipelineStore(options.root, runs, tracker, assessor, {
    overrides: options.overrides ?? {},
    watched: options.watched ?? [],
  });
  const experiments = new ExperimentStore(options.root, pipelines, runs);
  const childActions = options.allowActions && !options.actions ? new ChildRunActions(options.root, target) : undefined;
  const actions = options.allowActions ? (options.actions ?? childActions) : undefined;
  const unsubscribe = hub.subscribe((m) => {
    if (m.kind !== 'run-event') return;
    tracker.apply(m.event);
    experiments.apply(m.event);
    if (m.event.type === 'run-start' || m.event.type === 'run-end') runs.invalidate(m.event.runId);
    if (m.event.type === 'run-end') assessor.invalidate(m.event.pipeline);
  });
  const tailer =
    options.mode === 'standalone'
      ? new RunTailer(
          options.root,
          (event) => hub.publish({ kind: 'run-event', event }),
          () => {},
          () => hub.room(),
        )
      : undefined;
  const jobs = new JobStore(options.root);
  const stopJobs = watchJobs(jobs, () => hub.publish({ kind: 'changed', topic: 'jobs' }));
  const logsDirs = options.logsDirs ?? (await defaultLogsDirs(options.root, pipelines));
  const token = options.token ?? newToken();
  let security: ServerSecurity = { token, port: options.port, allowed: allowedHosts(options.port, options.host) };
  const server = createUiServer({
    api: {
      root: options.root,
      hub,
      runs,
      pipelines,
      massgen: new MassGenStore(options.root, logsDirs, (turnDir) => experiments.analysisDirFor(turnDir)),
      experiments,
      refine: new RefineStore(options.root),
      jobs,
      actions,
      mode: options.mode,
    },
    assets,
    security: () => security,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  security = { token, port, allowed: allowedHosts(port, options.host) };
  const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = `http://${shownHost}:${port}/?token=${token}`;
  const listed = recordServer(options.root, { url, pid: process.pid, mode: options.mode, startedAt: new Date().toISOString() });
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    token,
    hub,
    close() {
      closing ??= (async () => {
        unsubscribe();
        tailer?.close();
        stopJobs();
        childActions?.stopAll();
        if (listed) forgetServer(listed);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closing;
    },
  };
}
