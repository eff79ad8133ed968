import type { CommandIo } from './command.ts';
import type { Tracing } from '../engine/telemetry/tracing.ts';
import { telemetryMayBeConfigured } from '../engine/telemetry/configured.ts';
import { refineryVersion } from '../engine/state/noop-recording.ts';
import { redactSecrets } from '../security/known-secrets.ts';

/**
 * The process's trace export when OTEL_EXPORTER_OTLP_* or `telemetry:` turns it on; undefined
 * when off (nothing of it is loaded then); 'error' when misconfigured (reported, exit 2).
 */
export async function startTracing(io: CommandIo, command: string): Promise<Tracing | undefined | 'error'> {
  if (!telemetryMayBeConfigured(io.cwd, io.env)) return undefined;
  const { resolveTelemetry } = await import('../engine/telemetry/config.ts');
  const resolved = resolveTelemetry(io.cwd, io.env);
  if ('error' in resolved) {
    io.stderr.write(`refinery ${command}: ${redactSecrets(resolved.error).replaceAll('\n', '\n  ')}\n`);
    return 'error';
  }
  for (const w of resolved.warnings) io.stderr.write(`refinery: warning: ${redactSecrets(w)}\n`);
  if (!resolved.settings) return undefined;
  const { openTracing } = await import('../engine/telemetry/tracing.ts');
  return openTracing(resolved.settings, refineryVersion(), (message) => io.stderr.write(`refinery: warning: ${message}\n`));
}
