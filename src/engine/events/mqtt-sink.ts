import type { RunEvent } from '../types/events.ts';
import type { EventSink } from './bus.ts';

/** What the sink needs of an MQTT connection (src/mqtt/client.ts's MqttConnection has it). */
export interface MqttPublisher {
  publish(topic: string, payload: string, options: { qos: 0 | 1; retain: boolean }): Promise<void>;
}

/** The stage segment of run-level events (run-start, run-end); no stage id can be '-'. */
export const RUN_SEGMENT = '-';

/** A topic segment: '/', '+', '#' and '%' percent-encoded, so an instance id such as `turn[log_1/turn_2]` stays one level. */
export function topicSegment(value: string): string {
  return value.replace(/[%/+#\u0000]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** `<prefix>/<pipeline>/<run-id>/<stage>/<event>`; the stage is the loop id for loop events and `-` for run events. */
export function eventTopic(event: RunEvent, prefix = 'refinery'): string {
  const stage = 'stage' in event ? event.stage : event.type === 'loop-iteration' ? event.loop : RUN_SEGMENT;
  return [prefix, ...[event.pipeline, event.runId, stage, event.type].map(topicSegment)].join('/');
}

export interface MqttSink {
  sink: EventSink;
  /** Resolves once every publish so far was handed to the broker (acknowledged for QoS 1). */
  flush(): Promise<void>;
}

/**
 * Publishes every run event as its JSON (the payload of schemas/run-event.schema.json). Progress
 * and log lines go at QoS 0, everything else at QoS 1; nothing is retained. A failed publish is
 * reported once through onError and never stops the run.
 */
export function mqttSink(publisher: MqttPublisher, options: { prefix?: string; onError?: (error: Error) => void } = {}): MqttSink {
  const inFlight = new Set<Promise<void>>();
  let reported = false;
  const sink: EventSink = (event) => {
    const qos = event.type === 'stage-progress' || event.type === 'stage-log' ? 0 : 1;
    const p = publisher
      .publish(eventTopic(event, options.prefix), JSON.stringify(event), { qos, retain: false })
      .catch((error: unknown) => {
        if (!reported) options.onError?.(error instanceof Error ? error : new Error(String(error)));
        reported = true;
      });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };
  return {
    sink,
    async flush() {
      await Promise.all([...inFlight]);
    },
  };
}
