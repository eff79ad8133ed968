// Trace export for a process: one exporter (otel.ts), a trace per run. What the run and watch
// commands load, with a dynamic import, once configured.ts says export may be on.
import type { TelemetrySettings } from './config.ts';
import { openTraceExport } from './otel.ts';
import { runTrace, type RunTrace } from './run-trace.ts';

export interface Tracing {
  /** Spans go over TLS (the process needs the certificates NODE_EXTRA_CA_CERTS names). */
  readonly secure: boolean;
  /** A new trace for a run that starts now (a watch makes one per triggered run). */
  forRun(): RunTrace;
  /** Sends the spans still queued: at most 2 s, whatever the collector does. */
  shutdown(): Promise<void>;
}

/** `warn` hears of the first export that fails, once; the run goes on without its spans. */
export function openTracing(settings: TelemetrySettings, version: string, warn: (message: string) => void): Tracing {
  const traces = openTraceExport(settings, version, warn);
  return { secure: settings.tracesUrl.startsWith('https:'), forRun: () => runTrace(traces), shutdown: () => traces.shutdown() };
}
