import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveTelemetry } from '../../../src/engine/telemetry/config.ts';
import { telemetryMayBeConfigured } from '../../../src/engine/telemetry/configured.ts';
import { redactSecrets } from '../../../src/security/known-secrets.ts';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function project(config?: string): string {
  root = mkdtempSync(path.join(os.tmpdir(), 'refinery-telemetry-'));
  if (config !== undefined) writeFileSync(path.join(root, 'refinery.config.yaml'), config);
  return root;
}

describe('telemetry config', () => {
  it('telemetry config - nothing set: off, and the cheap check says so without reading YAML', () => {
    const dir = project('backends: {}\n');
    expect(telemetryMayBeConfigured(dir, {})).toBe(false);
    expect(resolveTelemetry(dir, {})).toEqual({ settings: undefined, warnings: [] });
  });

  it('telemetry config - the OTEL variables: /v1/traces appended to the base endpoint, headers percent-decoded and remembered as secrets, service name and resource attributes', () => {
    const dir = project();
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://logfire-us.pydantic.dev/',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=pylf_v1_us_Tk7Rm2Qx9Lw4Zc8Vb3Nh,x-team=a%20b',
      OTEL_SERVICE_NAME: 'svc',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=ci,service.name=ignored',
    };
    expect(telemetryMayBeConfigured(dir, env)).toBe(true);
    const resolved = resolveTelemetry(dir, env);
    expect(resolved).toEqual({
      settings: {
        tracesUrl: 'https://logfire-us.pydantic.dev/v1/traces',
        protocol: 'http/protobuf',
        headers: { Authorization: 'pylf_v1_us_Tk7Rm2Qx9Lw4Zc8Vb3Nh', 'x-team': 'a b' },
        serviceName: 'svc',
        resourceAttributes: { 'deployment.environment': 'ci' },
        exportTimeoutMs: 2000,
      },
      warnings: [],
    });
    expect(redactSecrets('token pylf_v1_us_Tk7Rm2Qx9Lw4Zc8Vb3Nh here')).not.toContain('pylf_v1_us_Tk7Rm2Qx9Lw4Zc8Vb3Nh');
  });

  it('telemetry config - OTEL_EXPORTER_OTLP_TIMEOUT sets the export timeout, the TRACES one wins; a value that is not whole milliseconds is a warning', () => {
    const dir = project();
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    const timeoutOf = (env: NodeJS.ProcessEnv) => {
      const resolved = resolveTelemetry(dir, { ...base, ...env });
      return 'settings' in resolved ? { ms: resolved.settings?.exportTimeoutMs, warnings: resolved.warnings } : resolved;
    };
    expect(timeoutOf({ OTEL_EXPORTER_OTLP_TIMEOUT: '500' })).toEqual({ ms: 500, warnings: [] });
    expect(timeoutOf({ OTEL_EXPORTER_OTLP_TIMEOUT: '500', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '7000' })).toEqual({ ms: 7000, warnings: [] });
    expect(timeoutOf({ OTEL_EXPORTER_OTLP_TIMEOUT: '2s' })).toEqual({
      ms: 2000,
      warnings: ['traces: OTEL_EXPORTER_OTLP_TIMEOUT=2s is not a whole number of milliseconds; using 2000'],
    });
  });

  it('telemetry config - the traces endpoint wins and is used as it is; a variable wins over the file', () => {
    const dir = project('telemetry:\n  endpoint: http://127.0.0.1:1\n  protocol: http/json\n');
    const resolved = resolveTelemetry(dir, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/custom',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
    expect('settings' in resolved && resolved.settings).toMatchObject({
      tracesUrl: 'http://127.0.0.1:4318/custom',
      protocol: 'http/protobuf',
    });
  });

  it('telemetry config - grpc, a URL with credentials, and an unknown key are errors that say what to do; OTEL_SDK_DISABLED turns it off', () => {
    const dir = project('telemetry:\n  endpoint: http://127.0.0.1:4318\n  protocl: http/json\n');
    expect(resolveTelemetry(dir, {})).toEqual({
      error:
        "invalid telemetry config:\nrefinery.config.yaml:3:3 telemetry: unknown key 'protocl'; did you mean 'protocol'? (allowed: enabled, endpoint, traces_endpoint, protocol, service_name, resource_attributes, headers_from_env)",
    });
    const clean = project();
    expect(resolveTelemetry(clean, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual({
      error: 'OTEL_EXPORTER_OTLP_PROTOCOL=grpc: refinery sends OTLP over HTTP only; use http/protobuf (port 4318 on a collector)',
    });
    const withCredentials = resolveTelemetry(clean, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://user:pa55word-xyz@collector.example' });
    expect(withCredentials).toHaveProperty('error');
    expect(JSON.stringify(withCredentials)).not.toContain('pa55word-xyz');
    expect(telemetryMayBeConfigured(clean, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(
      false,
    );
    expect(resolveTelemetry(clean, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toEqual({
      settings: undefined,
      warnings: [],
    });
  });
});
