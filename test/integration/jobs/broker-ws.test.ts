import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { OPENSSL, makeCertificates } from '../../helpers/certificates.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { startWsBroker } from '../../helpers/ws-broker.ts';
import { memoryIo, publishArgv, scriptedAgentArgv, tempDir } from './support.ts';

async function submitOver(
  dir: string,
  url: string,
  flags: string[] = [],
): Promise<{ code: number; out: string; err: string; record: unknown }> {
  const { io, out, err } = memoryIo(dir, { AGENT_SCRIPT: 'started,progress:half,completed:over websockets' });
  const code = await jobsCommand.run(
    [
      'submit',
      '--prompt',
      'ws job',
      '--broker',
      url,
      ...flags,
      '--timeout',
      '20',
      '--publish-cmd',
      JSON.stringify(publishArgv(path.join(dir, '.mam/jobs'))),
      '--',
      ...scriptedAgentArgv(),
    ],
    io,
  );
  const id = out().match(/registered job: (\S+)/)?.[1] as string;
  const status = memoryIo(dir);
  await jobsCommand.run(['status', '--job', id, '--json'], status.io);
  return { code, out: out(), err: err(), record: JSON.parse(status.out()).record };
}

describe('broker options: MQTT over WebSocket', () => {
  it('jobs submit --broker ws://... - a job runs over WebSocket, the agent publishing over the same broker', async () => {
    const { dir, cleanup } = tempDir();
    const broker = await startWsBroker();
    try {
      const result = await submitOver(dir, broker.url);
      expect(result.code, result.err).toBe(0);
      expect(result.out).toMatch(/seq=3 completed +over websockets/);
      expect(result.err).toContain(`broker: ${broker.url}`);
      expect((result.record as { broker: unknown }).broker).toMatchObject({ host: '127.0.0.1', tls: false });
    } finally {
      await broker.close();
      cleanup();
    }
  });

  it.skipIf(skipWithout(OPENSSL))(
    'jobs submit --broker wss://... - a job runs over WebSocket with TLS, checked against the CA given',
    async () => {
      const { dir, cleanup } = tempDir();
      const certs = makeCertificates(dir);
      const broker = await startWsBroker({ certFile: certs.server, keyFile: certs.serverKey });
      try {
        const result = await submitOver(dir, broker.url, ['--broker-ca', certs.ca]);
        expect(result.code, result.err).toBe(0);
        expect(result.out).toMatch(/seq=3 completed +over websockets/);
        expect((result.record as { broker: unknown }).broker).toMatchObject({ host: '127.0.0.1', tls: true });
        // Without the CA the server's certificate is not trusted: a clear refusal, not a hang.
        const untrusted = memoryIo(dir);
        const refused = await jobsCommand.run(
          ['submit', '--prompt', 'x', '--broker', broker.url, '--timeout', '5', '--', 'true'],
          untrusted.io,
        );
        expect(refused).toBe(3);
        expect(untrusted.err()).toMatch(/cannot connect to the MQTT broker wss:\/\/127\.0\.0\.1:\d+\/mqtt: .*(certificate|self.signed)/i);
      } finally {
        await broker.close();
        cleanup();
      }
    },
  );
});
