import { parseArgs } from 'node:util';
import type { Command } from '../command.ts';
import { startEmbeddedBroker } from '../../workflows/broker/embedded-broker.ts';

const USAGE = `Usage: refinery broker [--port N] [--host ADDRESS]

Runs an embedded MQTT broker (aedes) until Ctrl-C. It binds 127.0.0.1 unless --host says otherwise;
--port 0 (the default) picks a free port. Point other commands at it with --broker URL or
MQTT_BROKER=127.0.0.1 MQTT_PORT=N.`;

/** 127.0.0.0/8, ::1 and localhost: only this machine reaches them. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

export const brokerCommand: Command = {
  name: 'broker',
  summary: 'Run an embedded MQTT broker on 127.0.0.1',
  usage: USAGE,
  async run(argv, io) {
    let values: { port?: string; host?: string };
    try {
      values = parseArgs({
        args: argv,
        options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
      }).values;
    } catch (error) {
      io.stderr.write(`refinery broker: ${(error as Error).message}\n${USAGE}\n`);
      return 64;
    }
    const port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      io.stderr.write(`refinery broker: --port '${values.port}' must be an integer 0-65535\n`);
      return 64;
    }
    let broker;
    try {
      broker = await startEmbeddedBroker({ host: values.host ?? '127.0.0.1', port });
    } catch (error) {
      io.stderr.write(`refinery broker: ${(error as Error).message}\n`);
      return 3;
    }
    io.stdout.write(`broker listening on ${broker.url} (Ctrl-C to stop)\n`);
    if (!isLoopback(broker.host))
      io.stderr.write(
        `refinery broker: warning: ${broker.host} is reachable from other machines, and this broker asks no one for a password: anyone who reaches port ${broker.port} can read every job's events and publish on their topics (refinery's signed jobs drop what is forged; --compat jobs cannot). Keep it on 127.0.0.1 (the default), or behind a firewall or VPN you trust.\n`,
      );
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await broker.close();
    io.stdout.write('broker stopped\n');
    return 0;
  },
};
