import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../../src/workflows/broker/embedded-broker.ts';
import { AuditLog } from '../../../src/workflows/jobs/audit-log.ts';
import { buildPayload } from '../../../src/workflows/jobs/event-payload.ts';
import { JobWatch, type WatchDiagnostic } from '../../../src/workflows/jobs/job-watch.ts';
import { eventsTopic, registryPaths } from '../../../src/workflows/jobs/paths.ts';
import { publishJobEvent } from '../../../src/workflows/jobs/publisher.ts';
import { JobRegistry } from '../../../src/workflows/jobs/registry.ts';
import type { JobEventName, JobRecord } from '../../../src/workflows/jobs/types.ts';
import { recordBlockOf } from '../../../src/workflows/mqtt/broker-config.ts';
import { MqttConnection } from '../../../src/workflows/mqtt/client.ts';
import { MOSQUITTO, startMosquitto, type MosquittoBroker } from '../../helpers/mosquitto.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { tempDir } from './support.ts';

interface Fixture {
  registry: JobRegistry;
  audit: AuditLog;
  record: JobRecord;
  raw: MqttConnection;
  cleanup: () => Promise<void>;
}

async function fixture(url: string, compat = false): Promise<Fixture> {
  const { dir, cleanup } = tempDir();
  const paths = registryPaths(dir);
  const registry = new JobRegistry(paths);
  const { record } = await registry.register({
    prompt: 'p',
    agent: 'test',
    agentSession: 'none',
    broker: recordBlockOf({ url }),
    timeoutSec: 30,
    idleTimeoutSec: 30,
    compat,
  });
  const raw = await MqttConnection.open({ url }, { clientId: `raw-${record.job_id}`, clean: true });
  return {
    registry,
    audit: new AuditLog(paths),
    record,
    raw,
    cleanup: async () => {
      await raw.close(true);
      cleanup();
    },
  };
}

function payload(f: Fixture, seq: number, event: JobEventName, detail = '', token: string | null = f.record.auth_token): string {
  return JSON.stringify(buildPayload({ seq, jobId: f.record.job_id, event, timestamp: '2026-06-19T09:32:00Z', detail, token }));
}

async function send(f: Fixture, body: string | Buffer): Promise<void> {
  await f.raw.publish(eventsTopic(f.record.topic_prefix), body.toString(), { qos: 1, retain: false });
}

function watch(
  f: Fixture,
  url: string,
  extra: { timeoutMs?: number; idleTimeoutMs?: number; diagnostics?: WatchDiagnostic[]; seqs?: number[] } = {},
) {
  return JobWatch.start({
    registry: f.registry,
    audit: f.audit,
    jobId: f.record.job_id,
    broker: { url },
    env: {},
    timeoutMs: extra.timeoutMs ?? 20_000,
    idleTimeoutMs: extra.idleTimeoutMs ?? 20_000,
    onEvent: (p) => extra.seqs?.push(p.seq),
    onDiagnostic: (d) => extra.diagnostics?.push(d),
  });
}

function brokerSuite(name: string, start: () => Promise<{ url: string; close: () => Promise<void> }>, skip = false): void {
  describe.skipIf(skip)(`JobWatch over ${name}`, () => {
    let broker: { url: string; close: () => Promise<void> };
    beforeAll(async () => {
      broker = await start();
    });
    afterAll(async () => {
      await broker.close();
    });

    it('JobWatch - events in order end with the first completed', async () => {
      const f = await fixture(broker.url);
      try {
        const seqs: number[] = [];
        const w = await watch(f, broker.url, { seqs });
        for (const [seq, event] of [
          [1, 'started'],
          [2, 'permission_required'],
          [3, 'progress'],
          [4, 'completed'],
        ] as const) {
          await send(f, payload(f, seq, event, `step ${seq}`));
        }
        const outcome = await w.result;
        await w.close();
        expect(outcome).toMatchObject({ kind: 'completed', via: 'event', reason: 'step 4' });
        expect(seqs).toEqual([1, 2, 3, 4]);
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - duplicates are dropped by seq and out-of-order seqs are accepted and reported', async () => {
      const f = await fixture(broker.url);
      try {
        const seqs: number[] = [];
        const diagnostics: WatchDiagnostic[] = [];
        const w = await watch(f, broker.url, { seqs, diagnostics });
        await send(f, payload(f, 2, 'progress', 'second'));
        await send(f, payload(f, 1, 'started'));
        await send(f, payload(f, 2, 'progress', 'second again'));
        await send(f, payload(f, 3, 'completed', 'done'));
        const outcome = await w.result;
        await w.close();
        expect(outcome.kind).toBe('completed');
        expect(seqs).toEqual([2, 1, 3]);
        expect(diagnostics).toContainEqual({ kind: 'out-of-order', seq: 1, highest: 2 });
        expect(diagnostics).toContainEqual({ kind: 'duplicate', seq: 2, event: 'progress' });
        const { lines } = await f.audit.timeline(f.record.job_id);
        expect(lines.filter((l) => l.event === 'dropped').map((l) => l.detail)).toEqual(['duplicate seq 2']);
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - foreign, malformed, wrong-version and unsigned payloads are dropped and logged', async () => {
      const f = await fixture(broker.url);
      try {
        const diagnostics: WatchDiagnostic[] = [];
        const w = await watch(f, broker.url, { diagnostics });
        await send(f, Buffer.from([0xff, 0xfe, 0x00, 0x7b]));
        await send(f, '[1,2,3]');
        await send(f, JSON.stringify({ ...JSON.parse(payload(f, 1, 'completed')), schema_version: 2 }));
        await send(f, JSON.stringify({ ...JSON.parse(payload(f, 1, 'completed')), job_id: 'someoneelse' }));
        await send(f, JSON.stringify({ ...JSON.parse(payload(f, 1, 'completed')), event: 'finished' }));
        await send(f, payload(f, 1, 'completed', 'forged', null));
        await send(f, payload(f, 1, 'completed', 'forged', 'not-the-token'));
        await send(f, payload(f, 1, 'error', 'the real one'));
        const outcome = await w.result;
        await w.close();
        expect(outcome).toMatchObject({ kind: 'error', reason: 'the real one' });
        const reasons = diagnostics.flatMap((d) => (d.kind === 'dropped' ? [d.reason] : []));
        expect(reasons).toEqual(['undecodable', 'undecodable', 'schema_version', 'foreign_job', 'malformed', 'bad_token', 'bad_token']);
        const { lines } = await f.audit.timeline(f.record.job_id);
        expect(lines.filter((l) => l.event === 'dropped')).toHaveLength(7);
        expect(JSON.stringify(lines)).not.toContain(f.record.auth_token as string);
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - the first terminal event wins over a later one', async () => {
      const f = await fixture(broker.url);
      try {
        const w = await watch(f, broker.url);
        await send(f, payload(f, 1, 'completed', 'first'));
        await send(f, payload(f, 2, 'error', 'second'));
        const outcome = await w.result;
        await w.close();
        expect(outcome).toMatchObject({ kind: 'completed', reason: 'first' });
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - idle timeout fires when no event arrives', async () => {
      const f = await fixture(broker.url);
      try {
        const w = await watch(f, broker.url, { idleTimeoutMs: 300, timeoutMs: 10_000 });
        await send(f, payload(f, 1, 'started'));
        const outcome = await w.result;
        await w.close();
        expect(outcome).toMatchObject({ kind: 'timeout', via: 'timer' });
        expect(outcome.reason).toContain('idle');
        expect(outcome.events.map((e) => e.event)).toEqual(['started']);
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - a timeout names the events it dropped (a number beyond 2^53 cannot be verified), never bare silence', async () => {
      const f = await fixture(broker.url);
      try {
        const diagnostics: WatchDiagnostic[] = [];
        const w = await watch(f, broker.url, { idleTimeoutMs: 1500, timeoutMs: 10_000, diagnostics });
        const signed = payload(f, 1, 'completed', 'done');
        await send(f, signed.replace('"data":{', '"data":{"rows":12345678901234567890,'));
        const outcome = await w.result;
        await w.close();
        expect(diagnostics[0]).toMatchObject({ kind: 'dropped', reason: 'unverifiable', seq: 1 });
        expect(outcome.kind).toBe('timeout');
        expect(outcome.reason).toContain(
          '; 1 event was dropped, the last: seq 1 unverifiable: data.rows: the number 12345678901234567000 is beyond ±2^53',
        );
        expect(outcome.reason).toContain('send it as a string');
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - the total timeout fires even while progress keeps the job from going idle', async () => {
      const f = await fixture(broker.url);
      try {
        const w = await watch(f, broker.url, { idleTimeoutMs: 400, timeoutMs: 1200 });
        let seq = 0;
        const ticker = setInterval(() => void send(f, payload(f, ++seq, 'progress', 'still going')), 100);
        const outcome = await w.result;
        clearInterval(ticker);
        await w.close();
        expect(outcome.kind).toBe('timeout');
        expect(outcome.reason).toContain('total timeout');
        expect(outcome.events.length).toBeGreaterThan(5);
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - a compat job accepts events without a token', async () => {
      const f = await fixture(broker.url, true);
      try {
        expect(f.record.auth_token).toBeNull();
        const w = await watch(f, broker.url);
        await send(f, payload(f, 1, 'completed', 'python style', null));
        expect((await w.result).kind).toBe('completed');
        await w.close();
      } finally {
        await f.cleanup();
      }
    });

    it('JobWatch - an already finished job is answered from the registry', async () => {
      const f = await fixture(broker.url);
      try {
        await publishJobEvent({ registry: f.registry, jobId: f.record.job_id, event: 'completed', detail: 'earlier', env: {} });
        const w = await watch(f, broker.url);
        const outcome = await w.result;
        await w.close();
        expect(outcome).toMatchObject({ kind: 'completed', via: 'registry' });
      } finally {
        await f.cleanup();
      }
    });
  });
}

brokerSuite('the embedded aedes broker', async () => {
  const broker: EmbeddedBroker = await startEmbeddedBroker();
  return { url: broker.url, close: () => broker.close() };
});

brokerSuite(
  'a real mosquitto',
  async () => {
    const broker: MosquittoBroker = await startMosquitto();
    return { url: broker.url, close: () => broker.dispose() };
  },
  skipWithout(MOSQUITTO),
);

describe.skipIf(skipWithout(MOSQUITTO))('JobWatch across a mosquitto restart', () => {
  it('JobWatch - a terminal event published while the subscriber reconnects is delivered from its persistent session', async () => {
    const mosquitto = await startMosquitto();
    const f = await fixture(mosquitto.url);
    try {
      const diagnostics: WatchDiagnostic[] = [];
      const seen: string[] = [];
      const offline = new Promise<void>((resolve) => {
        void watchWith(resolve);
      });
      let w!: JobWatch;
      async function watchWith(onOffline: () => void): Promise<void> {
        w = await JobWatch.start({
          registry: f.registry,
          audit: f.audit,
          jobId: f.record.job_id,
          broker: { url: mosquitto.url },
          env: {},
          timeoutMs: 20_000,
          idleTimeoutMs: 20_000,
          onEvent: (p) => seen.push(`${p.seq}:${p.event}`),
          onDiagnostic: (d) => {
            diagnostics.push(d);
            if (d.kind === 'offline') onOffline();
            if (d.kind === 'reconnected') seen.push('reconnected');
          },
        });
        await publishJobEvent({ registry: f.registry, jobId: f.record.job_id, event: 'started', env: {} });
        await f.raw.close(true);
        await mosquitto.stop();
      }
      await offline;
      await mosquitto.start();
      // Published by a fresh client right after the restart, before the subscriber's reconnect timer fires.
      await publishJobEvent({ registry: f.registry, jobId: f.record.job_id, event: 'completed', detail: 'while away', env: {} });
      seen.push('published');
      const outcome = await w.result;
      await w.close();
      expect(outcome).toMatchObject({ kind: 'completed', via: 'event', reason: 'while away' });
      expect(seen).toEqual(['1:started', 'published', 'reconnected', '2:completed']);
      expect(diagnostics).toContainEqual({ kind: 'reconnected', sessionPresent: true });
    } finally {
      await mosquitto.dispose();
      await f.cleanup().catch(() => undefined);
    }
  });
});
