// refinery worker and refinery run --workers on a real mosquitto (MQTT 5, persistence on) and a
// real nginx (WebDAV) as the remote cache: workers in separate clones of one project.
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { events, runCli, type TempProject } from '../../helpers/project.ts';
import { MOSQUITTO, startMosquitto, type MosquittoBroker } from '../../helpers/mosquitto.ts';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import {
  GRID_PIPELINE,
  projectClone,
  spawnCli,
  stageEndsOf,
  startWorker,
  stopAll,
  uniqueProject,
  WORKER_KEY,
  type Proc,
} from './harness.ts';
import { open, ReplayGuard, seal } from '../../../src/engine/dispatch/envelope.ts';
import type { Job } from '../../../src/engine/dispatch/messages.ts';
import { sha256Hex } from '../../../src/engine/remote-cache/keys.ts';
import { UiProcess } from '../ui/ui-process.ts';

const SLOW_PIPELINE = `pipeline: slow
stages:
  slow:
    run: ": @P@ && sleep 3 && echo done-slow > \${outputs.o}"
    outputs: { o: out/slow.txt }
`;

const QUICK_PIPELINE = `pipeline: quick
stages:
  quick:
    run: ": @P@ && echo done-quick > \${outputs.o}"
    outputs: { o: out/quick.txt }
`;

const FOUR_PIPELINE = `pipeline: four
stages:
  s:
    foreach: [1, 2, 3, 4]
    run: ": @P@ && sleep 1 && echo s \${item} > \${outputs.o}"
    outputs: { o: "out/s-\${item}.txt" }
`;

/** A slow stage, then one after it that runs long enough for a late duplicate of the first to come back. */
const SLOW_THEN_AFTER = `pipeline: late
stages:
  slow:
    run: ": @P@ && sleep 2 && echo done-slow > \${outputs.o}"
    outputs: { o: out/slow.txt }
  after:
    run: ": @P@ && sleep 3 && cat out/slow.txt > \${outputs.o}"
    inputs: [out/slow.txt]
    outputs: { o: out/after.txt }
`;

const TEN_PIPELINE = `pipeline: ten
stages:
  t:
    foreach: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    run: ": @P@ && sleep 0.3 && echo t \${item} > \${outputs.o}"
    outputs: { o: "out/t-\${item}.txt" }
`;

const MIXED_PIPELINE = `pipeline: mixed
stages:
  quick:
    foreach: [1, 2]
    run: ": @P@ && echo quick \${item} > \${outputs.o}"
    outputs: { o: "out/q-\${item}.txt" }
  slow:
    run: ": @P@ && sleep 4 && echo slow > \${outputs.o}"
    outputs: { o: out/slow.txt }
`;

describe.skipIf(skipWithout(MOSQUITTO) || skipWithout(NGINX))('workers on mosquitto and nginx', () => {
  let broker: MosquittoBroker;
  let cache: NginxCache;
  let procs: Proc[] = [];
  const clones: TempProject[] = [];
  beforeAll(async () => {
    broker = await startMosquitto();
    cache = await startNginxCache();
  });
  afterEach(async () => {
    await stopAll(procs);
    procs = [];
  });
  afterAll(async () => {
    for (const c of clones) c.cleanup();
    await broker?.dispose();
    await cache?.dispose();
  });

  function clone(project: string, pipelines: Record<string, string>): TempProject {
    const c = projectClone(project, pipelines);
    clones.push(c);
    return c;
  }

  async function worker(c: TempProject, name: string): Promise<Proc> {
    const w = await startWorker(c, name, broker.url, cache.url);
    procs.push(w);
    return w;
  }

  function coordinator(c: TempProject, pipeline: string, ...args: string[]): Proc {
    const p = spawnCli(['run', pipeline, '--json', '--workers', broker.url, '--remote-cache', cache.url, ...args], c.root);
    procs.push(p);
    return p;
  }

  it('workers - 3 workers in separate clones run a pipeline, each stage-end names its worker, and the outputs are byte-identical to a local run', {
    timeout: 120_000,
  }, async () => {
    const project = uniqueProject();
    const [a, b, c, here, local] = [0, 1, 2, 3, 4].map(() => clone(project, { grid: GRID_PIPELINE }));
    await Promise.all([worker(a as TempProject, 'w1'), worker(b as TempProject, 'w2'), worker(c as TempProject, 'w3')]);
    const run = await coordinator(here as TempProject, 'grid').exited;
    expect(run.code, run.stderr).toBe(0);
    const ends = stageEndsOf(run.stdout);
    expect(Object.keys(ends).sort()).toEqual(['cell[1]', 'cell[2]', 'cell[3]', 'cell[4]', 'cell[5]', 'cell[6]', 'gather', 'report']);
    for (const e of Object.values(ends)) {
      expect(e.status, JSON.stringify(e)).toBe('succeeded');
      expect(['w1', 'w2', 'w3']).toContain(e.worker);
    }
    expect(new Set(Object.values(ends).map((e) => e.worker)).size).toBeGreaterThanOrEqual(2);
    const starts = events(run.stdout).filter((e) => e.type === 'stage-start');
    expect(starts.every((e) => typeof e.worker === 'string')).toBe(true);
    // The dashboard's run page gets each stage's worker from the run's journal.
    const runId = String(events(run.stdout).find((e) => e.type === 'run-start')?.runId);
    const ui = new UiProcess(['ui'], (here as TempProject).root);
    try {
      await ui.ready;
      const page = JSON.parse((await ui.request(`/api/runs/${runId}`, { auth: true })).body) as {
        stages: Array<{ id: string; worker?: string }>;
      };
      expect(Object.fromEntries(page.stages.map((s) => [s.id, s.worker]))).toEqual(
        Object.fromEntries(Object.entries(ends).map(([id, e]) => [id, e.worker])),
      );
    } finally {
      ui.child.kill('SIGTERM');
      await ui.exited;
    }

    const alone = await runCli(['run', 'grid', '--json', '-j', '2'], {
      cwd: (local as TempProject).root,
      env: { REFINERY_REMOTE_CACHE: '' },
    });
    expect(alone.code, alone.stderr).toBe(0);
    for (const rel of ['out/cell-1.txt', 'out/cell-6.txt', 'out/all.txt', 'out/report.json'])
      expect(readFileSync((here as TempProject).path(rel)), rel).toEqual(readFileSync((local as TempProject).path(rel)));

    const again = await coordinator(here as TempProject, 'grid').exited;
    expect(again.code, again.stderr).toBe(0);
    expect(Object.values(stageEndsOf(again.stdout)).every((e) => e.status === 'fresh')).toBe(true);
  });

  it('workers - jobs go out only as fast as the workers say they have free slots: never more sent and untaken than free slots', async () => {
    const project = uniqueProject();
    const [a, b, here] = [0, 1, 2].map(() => clone(project, { ten: TEN_PIPELINE }));
    await Promise.all([worker(a as TempProject, 'w1'), worker(b as TempProject, 'w2')]);
    // What the broker carries, in its order: every job sent, every worker's word on its slots and jobs.
    const spy = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
    await spy.subscribeAsync([`refinery/${project}/stages`, `refinery/${project}/slots`, `refinery/${project}/runs/#`], { qos: 1 });
    const key = Buffer.from(WORKER_KEY);
    const guard = new ReplayGuard(300_000);
    const free = new Map<string, { free: number; seq: number }>();
    const untaken = new Set<string>();
    const taken = new Set<string>();
    const excess: number[] = [];
    let sent = 0;
    const heard = (worker: string, body: { free: number; seq: number }): void => {
      if ((free.get(worker)?.seq ?? -1) < body.seq) free.set(worker, { free: body.free, seq: body.seq });
    };
    spy.on('message', (topic, payload) => {
      const opened = open(key, payload, guard);
      if (!opened.ok) return;
      const body = opened.body as { kind: string; job?: string; free: number; seq: number };
      if (body.kind === 'slots') heard(opened.from, body);
      else if (body.kind === 'taken') {
        heard(opened.from, body);
        untaken.delete(body.job as string);
        taken.add(body.job as string);
      } else if (topic.endsWith('/stages') && body.kind === 'job' && !taken.has(body.job as string)) {
        sent += 1;
        untaken.add(body.job as string);
        const slots = [...free.values()].reduce((sum, f) => sum + f.free, 0);
        excess.push(untaken.size - slots);
      }
    });
    const result = await coordinator(here as TempProject, 'ten').exited;
    await spy.endAsync();
    expect(result.code, result.stderr).toBe(0);
    expect(Object.values(stageEndsOf(result.stdout)).map((e) => e.status)).toEqual(Array(10).fill('succeeded'));
    expect(taken.size).toBe(10);
    expect(sent).toBeGreaterThanOrEqual(10);
    // Every job went out while some worker had a free slot for it (4 slots, 10 jobs ready at once).
    expect(Math.max(...excess)).toBeLessThanOrEqual(0);
    // Each worker got a share: a job is never held back from a worker with a free slot.
    const byWorker = Object.values(stageEndsOf(result.stdout)).map((e) => e.worker);
    expect(new Set(byWorker)).toEqual(new Set(['w1', 'w2']));
  });

  it('workers - a worker killed with SIGKILL mid-stage: its lease lapses and another worker runs the stage', async () => {
    const project = uniqueProject();
    const [a, b, here] = [0, 1, 2].map(() => clone(project, { slow: SLOW_PIPELINE }));
    const w1 = await worker(a as TempProject, 'w1');
    const run = coordinator(here as TempProject, 'slow', '--lease', '1');
    // The coordinator heard that w1 took it: from here only w1's lease tells whether it lives.
    await run.waitFor(/"type":"stage-start"[^\n]*"worker":"w1"/);
    w1.kill('SIGKILL');
    await w1.exited;
    await worker(b as TempProject, 'w2');
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(stageEndsOf(result.stdout).slow).toMatchObject({ status: 'succeeded', worker: 'w2' });
    expect(result.stderr).toMatch(/worker w1 said nothing of slow for .* dispatched again/);
    expect(readFileSync((here as TempProject).path('out/slow.txt'), 'utf8')).toBe('done-slow\n');
  });

  it('workers - a frozen worker comes back after its stage ran elsewhere: its late result is harmless, the stage ends once, and a rerun is up to date', async () => {
    const project = uniqueProject();
    const [a, b, here] = [0, 1, 2].map(() => clone(project, { late: SLOW_THEN_AFTER }));
    const w1 = await worker(a as TempProject, 'w1');
    const run = coordinator(here as TempProject, 'late', '--lease', '1');
    await run.waitFor(/"type":"stage-start"[^\n]*"stage":"slow"[^\n]*"worker":"w1"/);
    // Frozen, not killed: its heartbeats stop, and the coordinator gives slow to another worker.
    process.kill(w1.child.pid as number, 'SIGSTOP');
    await worker(b as TempProject, 'w2');
    await run.waitFor(/"type":"stage-start"[^\n]*"stage":"after"[^\n]*"worker":"w2"/);
    // While `after` runs, w1 wakes up and answers for slow, late.
    process.kill(w1.child.pid as number, 'SIGCONT');
    // Its answer for slow: the stage's result, which w2 stored meanwhile, under the same key.
    await w1.waitFor(/(found in the remote cache|ran) slow/);
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(0);
    const ends = events(result.stdout).filter((e) => e.type === 'stage-end');
    expect(ends.map((e) => `${e.stage}:${e.status}:${e.worker}`).sort()).toEqual(['after:succeeded:w2', 'slow:succeeded:w2']);
    expect(readFileSync((here as TempProject).path('out/after.txt'), 'utf8')).toBe('done-slow\n');
    const again = await coordinator(here as TempProject, 'late').exited;
    expect(again.code, again.stderr).toBe(0);
    expect(Object.values(stageEndsOf(again.stdout)).map((e) => e.status)).toEqual(['fresh', 'fresh']);
  });

  it('workers - a broker restart mid-run loses no stage', async () => {
    const project = uniqueProject();
    const [a, b, here] = [0, 1, 2].map(() => clone(project, { four: FOUR_PIPELINE }));
    await Promise.all([worker(a as TempProject, 'w1'), worker(b as TempProject, 'w2')]);
    const run = coordinator(here as TempProject, 'four', '--lease', '3');
    await run.waitFor(/"type":"stage-start"/);
    await broker.restart();
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(0);
    const ends = stageEndsOf(result.stdout);
    expect(Object.values(ends).map((e) => e.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    for (const i of [1, 2, 3, 4]) expect(readFileSync((here as TempProject).path(`out/s-${i}.txt`), 'utf8')).toBe(`s ${i}\n`);
  });

  it('workers - a worker whose pipeline differs refuses the job, says so, and the run fails naming the difference', async () => {
    const project = uniqueProject();
    const stale = clone(project, { grid: GRID_PIPELINE.replace('echo cell', 'echo CELL') });
    const here = clone(project, { grid: GRID_PIPELINE });
    const w1 = await worker(stale, 'w1');
    const result = await coordinator(here, 'grid', '--only', 'cell[1]').exited;
    expect(result.code).toBe(1);
    expect(stageEndsOf(result.stdout)['cell[1]']).toMatchObject({
      status: 'failed',
      code: 'worker-refused',
      worker: 'w1',
      reason: expect.stringContaining('stage cell is defined differently'),
    });
    expect(w1.stdout()).toMatch(/refused cell\[1\] .*defined differently/);
  });

  it('workers - forged, replayed and tampered replies are refused, and the stage still takes the real result', async () => {
    const project = uniqueProject();
    const [a, here] = [0, 1].map(() => clone(project, { slow: SLOW_PIPELINE }));
    await worker(a as TempProject, 'w1');
    const spy = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
    await spy.subscribeAsync(`refinery/${project}/runs/#`, { qos: 1 });
    const taken = new Promise<{ topic: string; text: string }>((resolve) =>
      spy.on('message', (topic, payload) => {
        const text = payload.toString();
        if (text.includes('"kind":"taken"')) resolve({ topic, text });
      }),
    );
    const run = coordinator(here as TempProject, 'slow');
    const real = await taken;
    const body = (JSON.parse(real.text) as { body: { run: string } }).body;
    const done = {
      kind: 'done',
      run: body.run,
      job: 'slow',
      attempt: 1,
      fingerprint: 'x',
      key: '0'.repeat(64),
      outputs: {},
      queuedMs: 0,
      runMs: 0,
      how: 'ran',
    };
    await spy.publishAsync(real.topic, seal(Buffer.from('forger-key-'.repeat(4)), 'w1', done), { qos: 1 });
    await spy.publishAsync(real.topic, JSON.stringify(done), { qos: 1 });
    await spy.publishAsync(real.topic, real.text, { qos: 1 });
    await spy.publishAsync(real.topic, real.text.replace('"attempt":1', '"attempt":2'), { qos: 1 });
    await spy.endAsync();
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(stageEndsOf(result.stdout).slow).toMatchObject({ status: 'succeeded', worker: 'w1', code: 'ran' });
    expect(result.stderr).toContain('signature does not match REFINERY_WORKER_KEY');
    expect(result.stderr).toContain('it is not signed');
    expect(result.stderr).toContain('its nonce was seen before (a replay)');
    expect(readFileSync((here as TempProject).path('out/slow.txt'), 'utf8')).toBe('done-slow\n');
  });

  it('run --workers - a signed reply naming other output digests than the entry in the cache: the outputs the entry names are taken', async () => {
    const project = uniqueProject();
    const [a, here] = [0, 1].map(() => clone(project, { quick: QUICK_PIPELINE }));
    // The stage's entry, stored by a local run in another clone.
    const stored = await runCli(['run', 'quick', '--remote-cache', cache.url], { cwd: (a as TempProject).root });
    expect(stored.code, stored.stderr).toBe(0);
    // A blob the reply names instead, in the cache too: fetched early, it must not be what is published.
    const forged = Buffer.from('forged\n');
    const put = await fetch(`${cache.url}/cas/${sha256Hex(forged)}`, { method: 'PUT', body: forged });
    expect(put.ok).toBe(true);
    const key = Buffer.from(WORKER_KEY);
    const fake = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
    const slots = { kind: 'slots', slots: 1, free: 1, seq: 1 };
    fake.on('message', (topic, payload) => {
      const opened = open(key, payload, new ReplayGuard(300_000));
      if (!opened.ok) return;
      // A coordinator asks for free slots: one is free (it sends a job only to workers that have one).
      if (topic.endsWith('/calls')) return void fake.publishAsync(`refinery/${project}/slots`, seal(key, 'fake', slots), { qos: 1 });
      const job = opened.body as Job;
      const say = (body: object) => fake.publishAsync(`refinery/${project}/runs/${job.run}`, seal(key, 'fake', body), { qos: 1 });
      const ids = { run: job.run, job: job.job, attempt: job.attempt };
      void say({ kind: 'taken', ...ids, free: 0, seq: 2 }).then(() =>
        say({
          kind: 'done',
          ...ids,
          fingerprint: job.fingerprint,
          key: '0'.repeat(64),
          outputs: { o: { sha256: sha256Hex(forged), size: forged.length } },
          queuedMs: 0,
          runMs: 0,
          idleMs: 0,
          how: 'ran',
        }),
      );
    });
    await fake.subscribeAsync([`$share/refinery/refinery/${project}/stages`, `refinery/${project}/calls`], { qos: 1 });
    // --force: no lookup first, the job goes to the (fake) worker.
    const result = await coordinator(here as TempProject, 'quick', '--force').exited;
    await fake.endAsync();
    expect(result.code, result.stderr).toBe(0);
    expect(stageEndsOf(result.stdout).quick).toMatchObject({ status: 'succeeded', worker: 'fake' });
    expect(readFileSync((here as TempProject).path('out/quick.txt'), 'utf8')).toBe('done-quick\n');
    // The blob the reply named was fetched while the entry was read (one round trip less), and left unused.
    expect(cache.requests().some((r) => r.method === 'GET' && r.uri.endsWith(`/cas/${sha256Hex(forged)}`))).toBe(true);
  });

  it('workers - a coordinator killed and started again takes a stage its worker finished from the cache without dispatching it', async () => {
    const project = uniqueProject();
    const [a, here] = [0, 1].map(() => clone(project, { mixed: MIXED_PIPELINE }));
    const w1 = await startWorker(a as TempProject, 'w1', broker.url, cache.url, '-j', '3');
    procs.push(w1);
    const first = coordinator(here as TempProject, 'mixed');
    await w1.waitFor(/took slow/);
    first.kill('SIGKILL');
    await first.exited;
    // The worker goes on, and stores its result where the next run looks first.
    await w1.waitFor(/ran slow/);
    const second = await coordinator(here as TempProject, 'mixed').exited;
    expect(second.code, second.stderr).toBe(0);
    expect(stageEndsOf(second.stdout).slow).toMatchObject({ status: 'succeeded', code: 'from-remote-cache' });
    const started = events(second.stdout)
      .filter((e) => e.type === 'stage-start')
      .map((e) => e.stage);
    expect(started).not.toContain('slow');
    expect(readFileSync((here as TempProject).path('out/slow.txt'), 'utf8')).toBe('slow\n');
  });

  it('run --workers - a stage no worker takes within --take-timeout fails the run with that reason', async () => {
    const here = clone(uniqueProject(), { slow: SLOW_PIPELINE });
    const result = await coordinator(here, 'slow', '--take-timeout', '1').exited;
    expect(result.code).toBe(1);
    expect(stageEndsOf(result.stdout).slow).toMatchObject({
      status: 'failed',
      code: 'no-worker',
      reason: expect.stringContaining('no worker took it within'),
    });
  });

  it('worker and run --workers - refuse to start without REFINERY_WORKER_KEY', async () => {
    const here = clone(uniqueProject(), { slow: SLOW_PIPELINE });
    const env = { REFINERY_WORKER_KEY: '' };
    const w = await runCli(['worker', '--broker', broker.url, '--remote-cache', cache.url], { cwd: here.root, env });
    const r = await runCli(['run', 'slow', '--workers', broker.url, '--remote-cache', cache.url], { cwd: here.root, env });
    for (const result of [w, r]) {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('REFINERY_WORKER_KEY is not set');
    }
    expect(WORKER_KEY.length).toBeGreaterThanOrEqual(32);
  });
});
