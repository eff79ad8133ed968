import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import { recordBlockOf } from '../../../src/workflows/mqtt/broker-config.ts';
import { MOSQUITTO, startMosquitto, type MosquittoBroker } from '../../helpers/mosquitto.ts';
import { pythonWithPaho, skipWithout, toolPath } from '../../helpers/system-tools.ts';
import { PYTHON_PUBLISHER, memoryIo, run, scriptedAgentArgv, tempDir } from './support.ts';

const paho = pythonWithPaho();
let mosquitto: MosquittoBroker;

/** Resolves once the text appears on the stream (an event, not a sleep). */
function seen(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    let buffer = '';
    const onData = (chunk: Buffer): void => {
      buffer += chunk.toString();
      if (buffer.includes(text)) {
        (stream as unknown as NodeJS.ReadableStream).off('data', onData);
        resolve();
      }
    };
    (stream as unknown as NodeJS.ReadableStream).on('data', onData);
  });
}

async function registerCompat(dir: string, compat: boolean): Promise<string> {
  const registry = new JobRegistry(registryPaths(dir));
  const { record } = await registry.register({
    prompt: 'interop',
    agent: 'python',
    agentSession: 'none',
    broker: recordBlockOf({ url: mosquitto.url }),
    timeoutSec: 20,
    idleTimeoutSec: 20,
    compat,
  });
  return record.job_id;
}

function python(dir: string, id: string, event: string, ...extra: string[]) {
  return run([toolPath(paho), PYTHON_PUBLISHER, '--registry-dir', path.join(dir, '.mam/jobs'), '--job', id, '--event', event, ...extra], {
    cwd: dir,
    env: { MQTT_BROKER: '127.0.0.1', MQTT_PORT: String(mosquitto.port) },
  });
}

describe.skipIf(skipWithout(MOSQUITTO, paho))('interop with an independent Python (paho) publisher over mosquitto', () => {
  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });
  afterAll(async () => {
    await mosquitto.dispose();
  });

  it('jobs wait - a --compat job finishes on the seed payloads a Python client publishes', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const id = await registerCompat(dir, true);
      const { io, out, err } = memoryIo(dir);
      const subscribed = seen(io.stderr, 'subscribed');
      const waiting = jobsCommand.run(['wait', '--job', id, '--timeout', '20'], io);
      await subscribed;
      for (const [event, extra] of [
        ['started', []],
        ['progress', ['--detail', 'half', '--repeat-seq']],
        ['completed', ['--detail', 'sorted 12 problems']],
      ] as const) {
        const result = await python(dir, id, event, ...extra);
        expect(result.code, result.stderr).toBe(0);
      }
      expect(await waiting).toBe(0);
      const lines = out().trim().split('\n');
      expect(lines.slice(0, 3).map((l) => l.split(' ').slice(1, 4).join(' ').replace(/\s+/g, ' '))).toEqual([
        `job=${id} seq=1 started`,
        `job=${id} seq=2 progress`,
        `job=${id} seq=3 completed`,
      ]);
      expect(lines[2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ job=\S+ seq=3 completed {12}sorted 12 problems$/);
      expect(err()).toContain('duplicate seq=2');
      const record = await new JobRegistry(registryPaths(dir)).get(id);
      expect(record).toMatchObject({ status: 'completed', last_seq: 3 });
    } finally {
      cleanup();
    }
  });

  it('jobs wait - without --compat the tokenless Python events are dropped as bad_token and the wait times out (exit 2)', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const id = await registerCompat(dir, false);
      const { io, err } = memoryIo(dir);
      const subscribed = seen(io.stderr, 'subscribed');
      const waiting = jobsCommand.run(['wait', '--job', id, '--idle-timeout', '1.5'], io);
      await subscribed;
      const dropped = seen(io.stderr, 'dropped bad_token');
      expect((await python(dir, id, 'completed', '--detail', 'spoofed')).code).toBe(0);
      await dropped;
      expect(await waiting).toBe(2);
      expect(err()).toContain('dropped bad_token seq=1');
      const audit = readFileSync(path.join(dir, '.mam/delegate_job_logs', id, 'events.ndjson'), 'utf8');
      expect(audit).toContain('bad_token');
    } finally {
      cleanup();
    }
  });

  it('jobs submit --compat - the agent follows its instructions with the Python publisher as the publish command', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(
        path.join(dir, 'validate.sh'),
        "python3 -c \"import json,os,sys; r=json.load(open(os.path.join(os.environ['REGISTRY_DIR'], os.environ['JOB_ID']+'.json'))); sys.exit(0 if r['last_seq']==2 else 1)\"\n",
      );
      const { io, out, err } = memoryIo(dir, {
        MQTT_BROKER: '127.0.0.1',
        MQTT_PORT: String(mosquitto.port),
        AGENT_SCRIPT: 'started,completed:from python',
      });
      const code = await jobsCommand.run(
        [
          'submit',
          '--compat',
          '--prompt',
          'say hi',
          '--agent',
          'scripted',
          '--timeout',
          '20',
          '--validate',
          'validate.sh',
          '--publish-cmd',
          JSON.stringify([toolPath(paho), PYTHON_PUBLISHER, '--registry-dir', path.join(dir, '.mam/jobs')]),
          '--',
          ...scriptedAgentArgv(),
        ],
        io,
      );
      expect(code, err()).toBe(0);
      expect(out()).toMatch(/seq=2 completed +from python/);
      expect(out()).toContain('validation: PASS');
      expect(err()).toContain(`broker: mqtt://127.0.0.1:${mosquitto.port}`);
    } finally {
      cleanup();
    }
  });
});
