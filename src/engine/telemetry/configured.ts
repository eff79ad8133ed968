import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Where a project configures trace export (`telemetry:`), relative to its root. */
export const TELEMETRY_CONFIG_FILE = 'refinery.config.yaml';

/** The variables that name where traces go (the OpenTelemetry SDK's own names). */
const ENDPOINT_VARIABLES = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const;

/**
 * Whether anything could turn trace export on: an OTLP endpoint variable, or a top-level
 * `telemetry:` key in refinery.config.yaml (found by its text, without the YAML library). When
 * nothing does, neither config.ts nor the OpenTelemetry SDK is loaded: a run without export
 * pays nothing for it.
 */
export function telemetryMayBeConfigured(root: string, env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (ENDPOINT_VARIABLES.some((name) => Boolean(env[name]?.trim()))) return true;
  let text: string;
  try {
    text = readFileSync(path.join(root, TELEMETRY_CONFIG_FILE), 'utf8');
  } catch {
    return false;
  }
  return /^telemetry\s*:/m.test(text);
}
