/**
 * What the engine needs of a message broker to talk to workers: publish and subscribe at QoS 1
 * on a persistent session, and word of a lost or restored connection. The caller makes the
 * connection (MQTT lives in src/workflows/mqtt/) and hands it down.
 */
export interface WorkerTransport {
  /** QoS 1: resolves once the broker acknowledged it; held and sent again while offline. */
  publish(topic: string, payload: string): Promise<void>;
  subscribe(topic: string): Promise<void>;
  unsubscribe(topic: string): Promise<void>;
  /** Each returns a function that stops listening. */
  onMessage(listener: (topic: string, payload: Buffer) => void): () => void;
  /** The connection is back; `sessionPresent` false: the broker lost the session (subscriptions are made again). */
  onReconnect(listener: (sessionPresent: boolean) => void): () => void;
  onOffline(listener: () => void): () => void;
}
