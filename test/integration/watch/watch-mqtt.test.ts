import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { events, REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { MOSQUITTO, startMosquitto, type MosquittoBroker } from '../../helpers/mosquitto.ts';
import { pythonWithPaho, skipWithout, toolPath } from '../../helpers/system-tools.ts';
import { MqttConnection, type IncomingMessage } from '../../../src/workflows/mqtt/client.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { WatchProcess } from './watch-process.ts';

let project: TempProject | undefined;
let watcher: WatchProcess | undefined;
let client: MqttConnection | undefined;
let mosquitto: MosquittoBroker | undefined;
const paho = pythonWithPaho();

afterEach(async () => {
  await client?.close(true);
  client = undefined;
  await watcher?.stop();
  watcher = undefined;
  await mosquitto?.dispose();
  mosquitto = undefined;
  project?.cleanup();
  project = undefined;
});

const PIPELINE = `pipeline: p
stages:
  each:
    foreach: { glob: "data/*/*.txt" }
    run: "cat \${item.path} > \${outputs.o}"
    inputs: ["\${item.path}"]
    outputs: { o: "out/\${item.stem}.copy" }
`;

/** Subscribes to refinery/# and returns the messages received, as they come. */
async function subscribe(url: string): Promise<IncomingMessage[]> {
  client = await MqttConnection.open({ url }, { clientId: `watch-test-${process.pid}`, clean: true });
  const received: IncomingMessage[] = [];
  client.on('message', (m) => {
    received.push(m);
    watcher?.check();
  });
  await client.subscribe(['refinery/#'], 1);
  return received;
}

async function changeAndCollect(
  w: WatchProcess,
  p: TempProject,
  received: IncomingMessage[],
): Promise<Array<{ topic: string; payload: Record<string, unknown> }>> {
  p.write('data/a/x.txt', 'changed\n');
  await w.nth(2, 'run-end');
  const runId = w.events.filter((e) => e.type === 'run-end')[1]?.runId as string;
  await w.until(() => received.some((m) => m.topic === `refinery/p/${runId}/-/run-end`), 'run-end over MQTT');
  return received
    .filter((m) => m.topic.includes(`/${runId}/`))
    .map((m) => ({ topic: m.topic, payload: JSON.parse(m.payload.toString()) as Record<string, unknown> }));
}

function checkMessages(messages: Array<{ topic: string; payload: Record<string, unknown> }>): void {
  const schemas = new SchemaRegistry(REPO_ROOT);
  expect(messages.map((m) => m.payload.type)).toEqual(['run-start', 'stage-start', 'stage-end', 'run-end']);
  for (const { topic, payload } of messages) {
    expect(schemas.validate('run-event', payload)).toEqual({ ok: true });
    const stage = typeof payload.stage === 'string' ? payload.stage.replaceAll('/', '%2F') : '-';
    expect(topic).toBe(`refinery/p/${String(payload.runId)}/${stage}/${String(payload.type)}`);
  }
  expect(messages[1]?.topic).toContain('/each[a%2Fx.txt]/stage-start');
}

/** The README's subscriber, with Debian's paho-mqtt: prints stage and status of the first stage-end it gets. */
const PYTHON_SUBSCRIBER = `
import json, sys
import paho.mqtt.client as mqtt
port = int(sys.argv[1])
def on_subscribe(client, userdata, mid, *rest):
    print("subscribed", flush=True)
def on_message(client, userdata, msg):
    event = json.loads(msg.payload)
    print(msg.topic, event["stage"], event["status"], flush=True)
    client.disconnect()
try:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
except AttributeError:
    client = mqtt.Client()
client.on_subscribe = on_subscribe
client.on_message = on_message
client.connect("127.0.0.1", port)
client.subscribe("refinery/+/+/+/stage-end", qos=1)
client.loop_forever()
`;

describe('refinery watch over MQTT', () => {
  it.skipIf(skipWithout(paho))(
    'watch - a Python paho-mqtt client subscribed to refinery/+/+/+/stage-end gets the stage-end events',
    async () => {
      project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'data/a/x.txt': 'x\n', 'data/b/y.txt': 'y\n' });
      watcher = new WatchProcess(['--mqtt-port', '0'], project.root, { mqtt: true });
      await watcher.nth(1, 'run-end');
      const port = /events on mqtt:\/\/127\.0\.0\.1:(\d+)/.exec(watcher.stderr)?.[1] as string;
      const python = spawn(toolPath(paho), ['-c', PYTHON_SUBSCRIBER, port], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      python.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        watcher?.check();
      });
      python.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => python.on('close', resolve));
      await watcher.until(() => out.includes('subscribed'), 'the Python subscriber');
      project.write('data/a/x.txt', 'changed\n');
      expect(await exited).toBe(0);
      expect(out).toMatch(/^refinery\/p\/[^/]+\/each\[a%2Fx\.txt\]\/stage-end each\[a\/x\.txt\] succeeded$/m);
    },
  );

  it('watch - events go to the embedded broker on 127.0.0.1 as refinery/<pipeline>/<run-id>/<stage>/<event>', async () => {
    project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'data/a/x.txt': 'x\n', 'data/b/y.txt': 'y\n' });
    watcher = new WatchProcess(['--mqtt-port', '0'], project.root, { mqtt: true });
    await watcher.until(() => /events on mqtt:\/\/127\.0\.0\.1:\d+ \(embedded broker\)/.test(watcher?.stderr ?? ''), 'the broker address');
    const url = /events on (mqtt:\/\/127\.0\.0\.1:\d+)/.exec(watcher.stderr)?.[1] as string;
    await watcher.nth(1, 'run-end');
    const received = await subscribe(url);
    checkMessages(await changeAndCollect(watcher, project, received));
  });

  it('watch - a run another terminal asks the watch for is published over MQTT like its own runs', async () => {
    project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'data/a/x.txt': 'x\n' });
    watcher = new WatchProcess(['--mqtt-port', '0'], project.root, { mqtt: true });
    await watcher.until(() => /events on mqtt:\/\/127\.0\.0\.1:\d+ \(embedded broker\)/.test(watcher?.stderr ?? ''), 'the broker address');
    const url = /events on (mqtt:\/\/127\.0\.0\.1:\d+)/.exec(watcher.stderr)?.[1] as string;
    await watcher.nth(1, 'run-end');
    await watcher.until(() => watcher?.stderr.includes('answered by this watch') ?? false, 'the socket');
    const received = await subscribe(url);
    const asked = await runCli(['run', 'p', '--force', '--json'], { cwd: project.root });
    expect(asked.code, asked.stderr).toBe(0);
    const runId = events(asked.stdout)[0]?.runId as string;
    await watcher.until(() => received.some((m) => m.topic === `refinery/p/${runId}/-/run-end`), 'the asked run over MQTT');
    checkMessages(
      received
        .filter((m) => m.topic.includes(`/${runId}/`))
        .map((m) => ({ topic: m.topic, payload: JSON.parse(m.payload.toString()) as Record<string, unknown> })),
    );
  });

  it.skipIf(skipWithout(MOSQUITTO))('watch - --broker URL publishes to that broker (mosquitto) instead', async () => {
    mosquitto = await startMosquitto();
    project = tempProject({ 'pipelines/p.yaml': PIPELINE, 'data/a/x.txt': 'x\n', 'data/b/y.txt': 'y\n' });
    const received = await subscribe(mosquitto.url);
    watcher = new WatchProcess(['--broker', mosquitto.url], project.root, { mqtt: true });
    await watcher.nth(1, 'run-end');
    const initial = watcher.events.find((e) => e.type === 'run-end')?.runId as string;
    await watcher.until(() => received.some((m) => m.topic === `refinery/p/${initial}/-/run-end`), 'the first run over MQTT');
    checkMessages(await changeAndCollect(watcher, project, received));
  });
});
