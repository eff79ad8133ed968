// The OpenTelemetry SDK enters the project here and nowhere else: a tracer provider with one
// batch processor and an OTLP/HTTP exporter (protobuf or JSON). Loaded only when trace export is
// configured (see configured.ts). Spans are made with the times the run's events carry, and the
// ids a stage span will have can be chosen ahead (its TRACEPARENT is in the stage's environment
// before the span starts).
import { context, type Attributes, SpanKind, SpanStatusCode, trace, TraceFlags } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  RandomIdGenerator,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { redactSecrets, redactSecretsDeep } from '../../security/known-secrets.ts';
import type { TelemetrySettings } from './config.ts';

/** At most this long for the last spans to go out at the run's end (and for any one request). */
export const FLUSH_TIMEOUT_MS = 2_000;
/** Spans waiting to be sent; beyond, new ones are dropped (a collector that is down costs no memory). */
const MAX_QUEUE = 2_048;
const MAX_BATCH = 512;

export type AttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, AttributeValue | undefined>;

export interface SpanStart {
  name: string;
  /** Milliseconds since the epoch. */
  startTime: number;
  attributes: SpanAttributes;
  parent?: SpanHandle;
  kind?: 'internal' | 'client';
  /** Ids chosen ahead (newSpanId/newTraceId); random otherwise. */
  traceId?: string;
  spanId?: string;
}

export interface SpanHandle {
  readonly traceId: string;
  readonly spanId: string;
  set(attributes: SpanAttributes): void;
  event(name: string, time: number, attributes?: SpanAttributes): void;
  end(time: number, error?: string): void;
}

export interface TraceExport {
  start(span: SpanStart): SpanHandle;
  newTraceId(): string;
  newSpanId(): string;
  /** Sends what is queued; resolves within FLUSH_TIMEOUT_MS whatever the collector does. */
  shutdown(): Promise<void>;
}

/** Hands out the ids set for the next span, else random ones (the SDK asks while it starts a span). */
class ChosenIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: { traceId?: string; spanId?: string } = {};

  generateTraceId(): string {
    const id = this.next.traceId ?? this.random.generateTraceId();
    this.next.traceId = undefined;
    return id;
  }

  generateSpanId(): string {
    const id = this.next.spanId ?? this.random.generateSpanId();
    this.next.spanId = undefined;
    return id;
  }
}

/** Strings cleaned of secrets (the same redactor as artifacts and events); undefined values left out. */
function clean(attributes: SpanAttributes | undefined): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value === undefined) continue;
    out[key] = typeof value === 'string' ? redactSecrets(value) : Array.isArray(value) ? redactSecretsDeep(value) : value;
  }
  return out;
}

/** Reports the first failed export through `onProblem`, once; the run never waits on or fails by it. */
class ReportingExporter implements SpanExporter {
  private reported = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly where: string,
    private readonly onProblem: (message: string) => void,
  ) {}

  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.inner.export(spans, (result) => {
      if (result.code !== 0 && !this.reported) {
        this.reported = true;
        const why = result.error?.message ?? 'no answer';
        this.onProblem(redactSecrets(`traces: cannot send spans to ${this.where} (${why}); the run goes on without them`));
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

export function openTraceExport(settings: TelemetrySettings, version: string, onProblem: (message: string) => void): TraceExport {
  const options = { url: settings.tracesUrl, headers: { ...settings.headers }, timeoutMillis: settings.exportTimeoutMs };
  const inner = settings.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
  const exporter = new ReportingExporter(inner, settings.tracesUrl, onProblem);
  const ids = new ChosenIds();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(
      clean({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: version }),
    ),
    idGenerator: ids,
    spanLimits: { attributeValueLengthLimit: 4_096, eventCountLimit: 1_000 },
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        maxQueueSize: MAX_QUEUE,
        maxExportBatchSize: MAX_BATCH,
        scheduledDelayMillis: 1_000,
        exportTimeoutMillis: settings.exportTimeoutMs,
      }),
    ],
  });
  const tracer = provider.getTracer('refinery', version);
  const random = new RandomIdGenerator();
  return {
    newTraceId: () => random.generateTraceId(),
    newSpanId: () => random.generateSpanId(),
    start(start) {
      const parent = start.parent
        ? trace.setSpanContext(context.active(), {
            traceId: start.parent.traceId,
            spanId: start.parent.spanId,
            traceFlags: TraceFlags.SAMPLED,
          })
        : context.active();
      ids.next = { ...(start.traceId ? { traceId: start.traceId } : {}), ...(start.spanId ? { spanId: start.spanId } : {}) };
      const span = tracer.startSpan(
        redactSecrets(start.name),
        {
          startTime: start.startTime,
          kind: start.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
          attributes: clean(start.attributes),
        },
        parent,
      );
      ids.next = {};
      const { traceId, spanId } = span.spanContext();
      return {
        traceId,
        spanId,
        set: (attributes) => span.setAttributes(clean(attributes)),
        event: (name, time, attributes) => span.addEvent(redactSecrets(name), clean(attributes), time),
        end(time, error) {
          if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(error) });
          span.end(time);
        },
      };
    },
    shutdown: () => withTimeout(provider.shutdown(), FLUSH_TIMEOUT_MS),
  };
}
