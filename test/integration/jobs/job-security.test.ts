// What other local users and other clients of the same MQTT broker can learn about a job, or do to it.
import { once } from 'node:events';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobsCommand } from '../../../src/cli/commands/jobs.ts';
import { buildPayload, MAX_PAYLOAD_BYTES } from '../../../src/workflows/jobs/event-payload.ts';
import type { JobRecord } from '../../../src/workflows/jobs/types.ts';
import { MqttConnection, type IncomingMessage } from '../../../src/workflows/mqtt/client.ts';
import { MOSQUITTO, startMosquitto, type MosquittoBroker } from '../../helpers/mosquitto.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { memoryIo, tempDir } from './support.ts';

const TEN_MB = 10 * 1024 * 1024;

async function jobs(dir: string, ...argv: string[]) {
  const { io, out, err } = memoryIo(dir);
  const code = await jobsCommand.run(argv, io);
  return { code, out: out(), err: err() };
}

/** Resolves with the first match of `pattern` in what the stream receives from now on. */
function waitFor(stream: NodeJS.WritableStream, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve) => {
    let text = '';
    const readable = stream as unknown as NodeJS.ReadableStream;
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      const match = text.match(pattern);
      if (match) {
        readable.off('data', onData);
        resolve(match);
      }
    };
    readable.on('data', onData);
  });
}

describe('job files on disk', () => {
  it('audit log - meta.json (it holds the prompt), events.ndjson and status.json are readable by their owner only', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const submitter = memoryIo(dir);
      const shown = waitFor(submitter.io.stdout, /--job ([0-9a-f]{8}) --event started/);
      const done = jobsCommand.run(['submit', '--agent', 'human', '--prompt', 'the secret plan', '--timeout', '20'], submitter.io);
      const id = (await shown)[1] as string;
      expect((await jobs(dir, 'publish', '--job', id, '--event', 'completed')).code).toBe(0);
      expect(await done).toBe(0);
      const logDir = path.join(dir, '.mam/delegate_job_logs', id);
      const modes = Object.fromEntries(
        readdirSync(logDir)
          .filter((name) => name.endsWith('.json') || name.endsWith('.ndjson'))
          .map((name) => [name, (statSync(path.join(logDir, name)).mode & 0o777).toString(8)]),
      );
      expect(modes).toEqual({ 'meta.json': '600', 'events.ndjson': '600', 'status.json': '600' });
      expect((statSync(path.join(dir, '.mam/jobs', `${id}.json`)).mode & 0o777).toString(8)).toBe('600');
    } finally {
      cleanup();
    }
  });
});

/** A human-agent submit, running; resolves once the job is registered and its subscriber is listening. */
async function submitHuman(dir: string, extraArgs: string[] = []) {
  const submitter = memoryIo(dir);
  const shown = waitFor(submitter.io.stdout, /--job ([0-9a-f]{8}) --event started/);
  const brokerLine = waitFor(submitter.io.stderr, /broker: (mqtt:\/\/127\.0\.0\.1:\d+)/);
  const done = jobsCommand.run(['submit', '--agent', 'human', '--prompt', 'do the work', '--timeout', '30', ...extraArgs], submitter.io);
  const id = (await shown)[1] as string;
  const url = (await brokerLine)[1] as string;
  const record = (): JobRecord => JSON.parse(readFileSync(path.join(dir, '.mam/jobs', `${id}.json`), 'utf8')) as JobRecord;
  /** Resolves once stdout shows the pattern, whether it is there already or comes later. */
  const printed = (pattern: RegExp): Promise<void> =>
    new Promise((resolve) => {
      const stream = submitter.io.stdout as unknown as NodeJS.ReadableStream;
      const check = (): void => {
        if (!pattern.test(submitter.out())) return;
        stream.off('data', check);
        resolve();
      };
      stream.on('data', check);
      check();
    });
  return { id, url, done, record, printed, out: submitter.out, err: submitter.err, stderr: submitter.io.stderr };
}

/** Another local process on the same broker: records everything it receives. */
async function sniffer(url: string) {
  const connection = await MqttConnection.open({ url }, { clientId: `sniffer-${process.pid}-${Date.now()}`, clean: true });
  const messages: IncomingMessage[] = [];
  const waiters: Array<{ match: (m: IncomingMessage) => boolean; resolve: (m: IncomingMessage) => void }> = [];
  connection.on('message', (message) => {
    messages.push(message);
    for (const w of waiters.splice(0)) w.match(message) ? w.resolve(message) : waiters.push(w);
  });
  return {
    connection,
    messages,
    next: (match: (m: IncomingMessage) => boolean) =>
      new Promise<IncomingMessage>((resolve) => {
        const seen = messages.find(match);
        if (seen) resolve(seen);
        else waiters.push({ match, resolve });
      }),
  };
}

const eventsTopicOf = (id: string): string => `python/mqtt/jobs/${id}/events`;

describe('a job on the embedded broker', () => {
  it('jobs submit - a sniffer subscribed to # gets no job event and cannot subscribe or publish to the job topic; the job completes from the real agent', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const job = await submitHuman(dir);
      const spy = await sniffer(job.url);
      try {
        await spy.connection.subscribe(['#'], 1);
        await expect(spy.connection.subscribe([eventsTopicOf(job.id)], 1)).rejects.toThrow(/refused subscription/);
        expect((await jobs(dir, 'publish', '--job', job.id, '--event', 'started', '--detail', 'working on it')).code).toBe(0);
        await job.printed(/seq=1 started +working on it/);
        // The broker wrote everything the sniffer may see before this probe, which it publishes itself.
        await spy.connection.publish('probe/after-started', 'x', { qos: 1, retain: false });
        await spy.next((m) => m.topic === 'probe/after-started');
        expect(spy.messages.map((m) => m.topic)).toEqual(['probe/after-started']);

        // Publishing on the job topic without the job's login: the broker drops the forger's connection.
        const forger = await MqttConnection.open(
          { url: job.url },
          { clientId: `forger-${process.pid}`, clean: true, reconnectPeriodMs: 60_000 },
        );
        forger.on('error', () => undefined);
        const dropped = once(forger, 'offline');
        const forged = buildPayload({
          seq: 2,
          jobId: job.id,
          event: 'completed',
          timestamp: '2026-01-01T00:00:00Z',
          detail: 'forged'.padEnd(TEN_MB, '!'),
          token: null,
        });
        void forger.publish(eventsTopicOf(job.id), JSON.stringify(forged), { qos: 1, retain: false }).catch(() => undefined);
        await dropped;
        await forger.close(true);

        expect((await jobs(dir, 'publish', '--job', job.id, '--event', 'completed', '--detail', 'real work done')).code).toBe(0);
        expect(await job.done).toBe(0);
        expect(job.out()).toContain('outcome: completed (real work done)');
        expect(job.out()).not.toContain('forged');
        const secret = job.record().auth_token as string;
        expect(spy.messages.some((m) => m.topic.startsWith('python/mqtt/jobs/') || m.payload.toString().includes(secret))).toBe(false);
      } finally {
        await spy.connection.close(true);
      }
    } finally {
      cleanup();
    }
  });

  it('jobs submit - refinery itself can still publish on the guarded topic: an agent that exits without reporting ends the job as error at once', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const submitted = await jobs(
        dir,
        'submit',
        '--prompt',
        'do the work',
        '--agent-kind',
        'command',
        '--exit-grace',
        '0.2',
        '--timeout',
        '30',
        '--',
        'true',
      );
      expect(submitted.out).toMatch(/seq=1 error +agent exited \(code 0\) without reporting completed or error/);
      expect(submitted.code).toBe(1);
    } finally {
      cleanup();
    }
  });
});

describe.skipIf(skipWithout(MOSQUITTO))('a job on a broker without ACLs (mosquitto)', () => {
  let mosquitto: MosquittoBroker;
  beforeAll(async () => {
    mosquitto = await startMosquitto();
  });
  afterAll(async () => {
    await mosquitto?.dispose();
  });

  it('jobs submit --broker - a sniffer sees the events but no secret; a forged completed built from them, a replay and 10 MB events are dropped and the real agent completes the job', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const spy = await sniffer(mosquitto.url);
      try {
        await spy.connection.subscribe(['#'], 1);
        const job = await submitHuman(dir, ['--broker', mosquitto.url]);
        const secret = job.record().auth_token as string;
        expect(secret).toMatch(/^[A-Za-z0-9_-]{40,}$/);
        expect((await jobs(dir, 'publish', '--job', job.id, '--event', 'started', '--detail', 'working on it')).code).toBe(0);
        const started = await spy.next((m) => m.topic === eventsTopicOf(job.id));
        expect(started.payload.toString()).not.toContain(secret);
        const sniffed = JSON.parse(started.payload.toString()) as { seq: number; data: Record<string, unknown> };
        expect(Object.keys(sniffed.data)).toEqual(['hmac_sig']);

        const forge = async (body: string): Promise<void> => {
          await spy.connection.publish(eventsTopicOf(job.id), body, { qos: 1, retain: false });
        };
        const droppedForged = waitFor(job.stderr, /dropped bad_token seq=2/);
        await forge(JSON.stringify({ ...sniffed, seq: 2, event: 'completed', detail: 'forged', data: sniffed.data }));
        await droppedForged;
        const droppedReplay = waitFor(job.stderr, /duplicate seq=1 \(started\) ignored/);
        await forge(started.payload.toString());
        await droppedReplay;
        const droppedHuge = waitFor(job.stderr, new RegExp(`dropped oversize: payload is \\d+ bytes; the limit is ${MAX_PAYLOAD_BYTES}`));
        await forge(JSON.stringify({ ...sniffed, seq: 3, event: 'completed', detail: 'x'.repeat(TEN_MB), data: sniffed.data }));
        await droppedHuge;
        // Size is checked whatever the sender holds: 10 MB signed with the job's own token is dropped too.
        const droppedSigned = waitFor(job.stderr, /dropped oversize: payload is \d+ bytes/);
        const signed = buildPayload({
          seq: 4,
          jobId: job.id,
          event: 'completed',
          timestamp: '2026-01-01T00:00:00Z',
          detail: 'y'.repeat(TEN_MB),
          token: secret,
        });
        await forge(JSON.stringify(signed));
        await droppedSigned;

        expect((await jobs(dir, 'publish', '--job', job.id, '--event', 'completed', '--detail', 'real work done')).code).toBe(0);
        expect(await job.done).toBe(0);
        expect(job.out()).toContain('outcome: completed (real work done)');
        const audit = readFileSync(path.join(dir, '.mam/delegate_job_logs', job.id, 'events.ndjson'), 'utf8');
        for (const text of [job.out(), job.err(), audit]) {
          expect(text.length).toBeLessThan(64 * 1024);
          expect(text).not.toContain('forged');
          expect(text).not.toContain(secret);
        }
        expect(
          audit
            .split('\n')
            .filter((l) => l.includes('"event":"dropped"'))
            .map((l) => JSON.parse(l).detail.split(':')[0]),
        ).toEqual(['bad_token', 'duplicate seq 1', 'oversize', 'oversize']);
      } finally {
        await spy.connection.close(true);
      }
    } finally {
      cleanup();
    }
  });

  it('jobs publish - a --detail over the limit is refused before anything is sent (exit 64) and takes no seq', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const job = await submitHuman(dir, ['--broker', mosquitto.url]);
      const huge = await jobs(dir, 'publish', '--job', job.id, '--event', 'completed', '--detail', 'z'.repeat(40 * 1024));
      expect([huge.code, huge.err]).toEqual([64, expect.stringMatching(/--detail is 40960 characters; the limit is 32768/)]);
      expect(job.record().last_seq).toBe(0);
      expect((await jobs(dir, 'publish', '--job', job.id, '--event', 'completed', '--detail', 'short')).code).toBe(0);
      expect(await job.done).toBe(0);
      expect(job.out()).toMatch(/seq=1 completed +short/);
    } finally {
      cleanup();
    }
  });
});
