import { randomBytes } from 'node:crypto';
import type { Agent, AgentExit, AgentHandle, AgentLaunch } from '../../src/workflows/jobs/agents/agent.ts';
import { publishJobEvent } from '../../src/workflows/jobs/publisher.ts';
import type { JobRegistry } from '../../src/workflows/jobs/registry.ts';
import type { JobEventName } from '../../src/workflows/jobs/types.ts';
import type { BrokerConfig } from '../../src/workflows/mqtt/broker-config.ts';
import { MqttConnection } from '../../src/workflows/mqtt/client.ts';

/**
 * A scripted agent in the benchmark process: its own MQTT connection (as a real agent process would
 * have), refinery's publisher (registry lock, seq, token), and a fixed script of events.
 */
export class ScriptedAgent implements Agent {
  readonly kind = 'command';

  constructor(
    private readonly registry: JobRegistry,
    private readonly broker: BrokerConfig,
    private readonly script: readonly JobEventName[],
    private readonly onSend: (jobId: string, seq: number, event: JobEventName) => void,
  ) {}

  describe(): string {
    return 'scripted benchmark agent';
  }

  async start(launch: AgentLaunch): Promise<AgentHandle> {
    const exited: Promise<AgentExit> = this.run(launch.jobId).then(
      () => ({ code: 0, signal: null }),
      (error: unknown) => {
        process.stderr.write(`agent ${launch.jobId}: ${(error as Error).message}\n`);
        return { code: 1, signal: null };
      },
    );
    return { ownsProcess: true, exited, stop: async () => {} };
  }

  private async run(jobId: string): Promise<void> {
    const connection = await MqttConnection.open(this.broker, {
      clientId: `bench-agent-${jobId}-${randomBytes(2).toString('hex')}`,
      clean: true,
      connectTimeoutMs: 60_000,
    });
    try {
      for (const event of this.script) {
        await publishJobEvent({
          registry: this.registry,
          jobId,
          event,
          detail: event,
          env: {},
          connection,
          timeoutMs: 60_000,
          onSend: (payload) => this.onSend(jobId, payload.seq, payload.event),
        });
      }
    } finally {
      await connection.close();
    }
  }
}
