import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { OPENSSL, makeCertificates } from '../../helpers/certificates.ts';
import { MOSQUITTO, startMosquitto } from '../../helpers/mosquitto.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';
import { memoryIo, publishArgv, scriptedAgentArgv, tempDir } from './support.ts';

const mosquittoPasswd = systemTool('mosquitto_passwd');

describe.skipIf(skipWithout(MOSQUITTO, mosquittoPasswd, OPENSSL))(
  'broker options: mqtts with user, password, CA and client certificate',
  () => {
    it('jobs submit --broker mqtts://USER:PASS@... - a job runs over mutual TLS with a password, which never reaches the record or the output', async () => {
      const { dir, cleanup } = tempDir();
      const certs = makeCertificates(dir);
      const passwords = path.join(dir, 'passwd');
      execFileSync(toolPath(mosquittoPasswd), ['-b', '-c', passwords, 'agent', 's3cret-pw']);
      const mosquitto = await startMosquitto({
        passwordFile: passwords,
        tls: { caFile: certs.ca, certFile: certs.server, keyFile: certs.serverKey, requireCertificate: true },
      });
      try {
        const url = `mqtts://agent:s3cret-pw@127.0.0.1:${mosquitto.port}`;
        const tlsFlags = ['--broker-ca', certs.ca, '--broker-cert', certs.client, '--broker-key', certs.clientKey];
        const { io, out, err } = memoryIo(dir, { AGENT_SCRIPT: 'started,completed:over tls' });
        const code = await jobsCommand.run(
          [
            'submit',
            '--prompt',
            'tls job',
            '--broker',
            url,
            ...tlsFlags,
            '--timeout',
            '20',
            '--publish-cmd',
            JSON.stringify(publishArgv(path.join(dir, '.mam/jobs'))),
            '--',
            ...scriptedAgentArgv(),
          ],
          io,
        );
        expect(code, err()).toBe(0);
        expect(out()).toMatch(/seq=2 completed +over tls/);
        expect(err()).toContain(`broker: mqtts://127.0.0.1:${mosquitto.port}`);
        const id = out().match(/registered job: (\S+)/)?.[1] as string;
        const status = await (async () => {
          const m = memoryIo(dir);
          await jobsCommand.run(['status', '--job', id, '--json'], m.io);
          return m.out();
        })();
        expect(JSON.parse(status).record.broker).toEqual({
          host: '127.0.0.1',
          port: mosquitto.port,
          tls: true,
          username: 'agent',
          password: null,
        });
        expect(out() + err() + status).not.toContain('s3cret-pw');

        const wrong = memoryIo(dir);
        const refused = await jobsCommand.run(
          [
            'submit',
            '--prompt',
            'x',
            '--broker',
            `mqtts://agent:wrong@127.0.0.1:${mosquitto.port}`,
            ...tlsFlags,
            '--timeout',
            '5',
            '--',
            'true',
          ],
          wrong.io,
        );
        expect(refused).toBe(3);
        expect(wrong.err()).toMatch(
          /cannot connect to the MQTT broker mqtts:\/\/127\.0\.0\.1:\d+: .*(Not authorized|Bad User Name or Password)/i,
        );
        expect(wrong.err()).not.toContain('wrong');
      } finally {
        await mosquitto.dispose();
        cleanup();
      }
    });
  },
);
