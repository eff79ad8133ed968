// One run's events as one trace: a root span for the run, a child span per stage, a span per
// model call (OpenTelemetry GenAI conventions) and per delegated job under its stage, progress
// and warnings as span events. Times are the events' own. A stage span's id is chosen when the
// stage gets its slot, so the TRACEPARENT in its environment names it before it starts.
import type { RunEvent, StageEndEvent, StageStartEvent } from '../types/events.ts';
import type { StageInstance } from '../types/plan.ts';
import type { TaskReport } from '../../task/define-task.ts';
import type { EventSink } from '../events/bus.ts';
import type { SpanAttributes, SpanHandle, TraceExport } from './otel.ts';

export interface RunTrace {
  sink: EventSink;
  /** The stage's TRACEPARENT (W3C trace context of its span), for the processes it starts. */
  stageEnv(inst: StageInstance): Readonly<Record<string, string>>;
}

/** `00-<trace>-<span>-01`: version 00, sampled. */
export function traceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

/** The pipeline stage and foreach item of an instance id such as `analyze[log_1/turn_2]`. */
export function instanceParts(id: string): { stage: string; item?: string } {
  const open = id.indexOf('[');
  if (open <= 0 || !id.endsWith(']')) return { stage: id };
  return { stage: id.slice(0, open), item: id.slice(open + 1, -1) };
}

/** native: the schema went to the model as such; prompt: only in the prompt text. */
function schemaRoute(via: string | undefined): string | undefined {
  if (via === undefined || via === 'none') return via;
  return via === 'prompt' || via === 'refused' ? 'prompt' : 'native';
}

function llmAttributes(report: Extract<TaskReport, { kind: 'llm-call' }>): SpanAttributes {
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': report.system ?? report.backend,
    'gen_ai.provider.name': report.system ?? report.backend,
    'gen_ai.request.model': report.model,
    'gen_ai.response.model': report.model,
    'gen_ai.usage.input_tokens': report.inputTokens,
    'gen_ai.usage.output_tokens': report.outputTokens,
    'refinery.llm.backend': report.backend,
    'refinery.llm.tag': report.tag,
    'refinery.llm.cost_usd': report.costUsd,
    'refinery.llm.cache_hit': report.cached,
    'refinery.llm.cache': report.cached ? (report.cache ?? 'local') : undefined,
    'refinery.llm.attempts': report.attempts,
    'refinery.llm.schema_route': schemaRoute(report.schemaVia),
    'refinery.llm.schema_via': report.schemaVia,
  };
}

/** Where a stage's outputs came from: up to date here, the remote cache, or a run of it. */
function stageCache(event: StageEndEvent): string | undefined {
  if (event.status === 'fresh') return 'local';
  if (event.code === 'from-remote-cache') return 'remote';
  return event.status === 'succeeded' ? 'miss' : undefined;
}

const FAILED = new Set(['failed', 'aborted']);

export function runTrace(traces: TraceExport): RunTrace {
  const traceId = traces.newTraceId();
  let root: SpanHandle | undefined;
  /** Span ids chosen for stages that got a slot, before their span starts. */
  const chosen = new Map<string, string>();
  const stages = new Map<string, SpanHandle>();
  const tasks = new Map<string, string>();

  const startStage = (stage: string, time: number, attributes: SpanAttributes): SpanHandle => {
    const parts = instanceParts(stage);
    const spanId = chosen.get(stage);
    const span = traces.start({
      name: `stage ${stage}`,
      startTime: time,
      ...(root ? { parent: root } : { traceId }),
      ...(spanId ? { spanId } : {}),
      attributes: {
        'refinery.stage.id': stage,
        'refinery.stage.name': parts.stage,
        'refinery.foreach.item': parts.item,
        'refinery.task': tasks.get(stage),
        ...attributes,
      },
    });
    stages.set(stage, span);
    return span;
  };

  const onStart = (event: StageStartEvent, time: number): void => {
    const open = stages.get(event.stage);
    if (open) {
      open.event('retry', time, { 'refinery.stage.attempt': event.attempt, 'refinery.stage.reason': event.reason });
      open.set({ 'refinery.stage.attempts': event.attempt });
      return;
    }
    startStage(event.stage, time, { 'refinery.stage.reason': event.reason, 'refinery.stage.attempts': event.attempt });
  };

  const onEnd = (event: StageEndEvent, time: number): void => {
    const span = stages.get(event.stage) ?? startStage(event.stage, time - event.durationMs, {});
    stages.delete(event.stage);
    chosen.delete(event.stage);
    span.set({
      'refinery.stage.status': event.status,
      'refinery.stage.outcome': event.code,
      // Why it ran is on the span since it started; why it did not is here.
      ...(event.reason && event.status !== 'succeeded' ? { 'refinery.stage.reason': event.reason } : {}),
      'refinery.stage.duration_ms': event.durationMs,
      'refinery.stage.attempts': event.attempts,
      'refinery.stage.cache': stageCache(event),
      'refinery.stage.saved_ms': event.remote?.savedMs,
      'refinery.stage.saved_usd': event.remote?.savedUsd,
      'refinery.stage.summary': event.summary,
    });
    span.end(time, FAILED.has(event.status) ? (event.reason ?? event.code) : undefined);
  };

  const onReport = (stage: string, report: TaskReport, time: number): void => {
    const parent = stages.get(stage) ?? root;
    if (!parent) return;
    switch (report.kind) {
      case 'llm-call': {
        const span = traces.start({
          name: `chat ${report.model}`,
          kind: 'client',
          startTime: time - report.latencyMs,
          parent,
          attributes: llmAttributes(report),
        });
        span.end(time);
        return;
      }
      case 'job': {
        const started = Date.parse(report.startedAt);
        const span = traces.start({
          name: `job ${report.jobId}`,
          startTime: Number.isFinite(started) ? started : time - report.durationMs,
          parent,
          attributes: {
            'refinery.job.id': report.jobId,
            'refinery.job.agent': report.agent,
            'refinery.job.type': report.type,
            'refinery.job.outcome': report.outcome,
            'refinery.job.iterations': report.iterations,
          },
        });
        span.end(
          Number.isFinite(started) ? started + report.durationMs : time,
          report.outcome === 'completed' ? undefined : report.outcome,
        );
        return;
      }
      case 'warning':
        parent.event('warning', time, { message: report.message });
        return;
      case 'metric':
        parent.set({ [`refinery.metric.${report.name}`]: report.value });
        return;
    }
  };

  const sink: EventSink = (event: RunEvent) => {
    const time = Date.parse(event.time);
    switch (event.type) {
      case 'run-start':
        root = traces.start({
          name: `run ${event.pipeline}`,
          startTime: time,
          traceId,
          attributes: {
            'refinery.pipeline': event.pipeline,
            'refinery.run.id': event.runId,
            // Names only: a param's value may be a secret.
            'refinery.run.params': Object.keys(event.params).sort(),
            'refinery.run.stages': event.stages,
            'refinery.run.concurrency': event.concurrency,
          },
        });
        return;
      case 'stage-start':
        onStart(event, time);
        return;
      case 'stage-progress':
        stages.get(event.stage)?.event('progress', time, { 'refinery.progress.fraction': event.fraction, message: event.message });
        return;
      case 'stage-report':
        onReport(event.stage, event.report, time);
        return;
      case 'stage-end':
        onEnd(event, time);
        return;
      case 'loop-iteration':
        root?.event('loop iteration', time, {
          'refinery.loop.id': event.loop,
          'refinery.loop.iteration': event.iteration,
          'refinery.loop.decision': event.decision,
        });
        return;
      case 'run-end': {
        for (const [stage, span] of stages) span.end(time, `no stage-end for ${stage}`);
        stages.clear();
        root?.set({
          'refinery.run.outcome': event.status,
          'refinery.run.duration_ms': event.durationMs,
          ...Object.fromEntries(Object.entries(event.counts).map(([status, n]) => [`refinery.run.count.${status}`, n])),
        });
        root?.end(time, event.status === 'succeeded' ? undefined : event.status);
        return;
      }
      case 'stage-log':
        // Log lines stay in events.jsonl: a span event each would swamp a trace.
        return;
    }
  };

  return {
    sink,
    stageEnv(inst) {
      let spanId = chosen.get(inst.id);
      if (!spanId) {
        spanId = traces.newSpanId();
        chosen.set(inst.id, spanId);
      }
      if (inst.spec.kind === 'task') tasks.set(inst.id, inst.spec.task);
      return { TRACEPARENT: traceparent(traceId, spanId) };
    },
  };
}
