import type { RunEvent, RunEventInput } from '../types/events.ts';
import { redactSecretsDeep } from '../../security/known-secrets.ts';

export type EventSink = (event: RunEvent) => void;

/**
 * Fans typed run events out to sinks; a sink that throws is dropped, the run goes on. Every event is
 * cleaned of secrets here, the one door to the console, events.jsonl, JUnit and MQTT.
 */
export class EventBus {
  private readonly sinks = new Set<EventSink>();

  constructor(
    readonly runId: string,
    readonly pipeline: string,
  ) {}

  subscribe(sink: EventSink): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  emit(input: RunEventInput): RunEvent {
    const event = redactSecretsDeep({ ...input, runId: this.runId, pipeline: this.pipeline, time: new Date().toISOString() } as RunEvent);
    for (const sink of this.sinks) {
      try {
        sink(event);
      } catch {
        this.sinks.delete(sink);
      }
    }
    return event;
  }
}

/** A run id: the start time, then the process id in base 36 and three random characters. */
export function newRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})Z$/, '$1Z');
  return `${stamp}-${process.pid.toString(36)}${Math.floor(Math.random() * 36 ** 3)
    .toString(36)
    .padStart(3, '0')}`;
}

/** The process that made a run id, or undefined when the name is not a run id. */
export function runIdPid(runId: string): number | undefined {
  const match = /^\d{8}T\d{9}Z-([0-9a-z]+)[0-9a-z]{3}$/.exec(runId);
  return match ? parseInt(match[1] as string, 36) : undefined;
}
