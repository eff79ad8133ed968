// Benchmark: N concurrent delegate jobs with scripted agents through a real mosquitto, restarted
// once in the middle; the peer is the same workload through the embedded aedes broker (no restart).
// Prints jobs/s, p50/p99 publish->subscriber latency, lost terminal events, and the ratios.
//   npx tsx bench/jobs/run.ts [--jobs 1000]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedBroker } from '../../src/workflows/broker/embedded-broker.ts';
import { delegateJob, type DelegateResult } from '../../src/workflows/jobs/delegate.ts';
import { registryPaths } from '../../src/workflows/jobs/paths.ts';
import { JobRegistry } from '../../src/workflows/jobs/registry.ts';
import type { JobEventName } from '../../src/workflows/jobs/types.ts';
import { startMosquitto } from '../../test/helpers/mosquitto.ts';
import { ScriptedAgent } from './scripted-agent.ts';

const SCRIPT: JobEventName[] = ['started', 'progress', 'completed'];

interface RunReport {
  label: string;
  jobs: number;
  wallMs: number;
  completed: number;
  /** Jobs whose terminal event never reached the subscriber over MQTT. */
  lostTerminals: number;
  latencies: number[];
  restartedAfter?: number;
  /** Subscriber reconnects after the restart, and how many found their session kept. */
  reconnects: number;
  sessionsKept: number;
  /** Events handed to MQTT while the broker was stopped or starting again. */
  sentDuringRestart: number;
  terminalsSentDuringRestart: number;
}

interface BrokerControl {
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** How long the broker stays down at most: until this many terminal events went out into the void. */
const DOWN_FOR_TERMINALS = (jobs: number): number => Math.max(1, Math.floor(jobs / 20));
const MAX_DOWNTIME_MS = 10_000;

async function runWorkload(label: string, url: string, jobs: number, broker?: BrokerControl): Promise<RunReport> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'refinery-bench-jobs-'));
  try {
    const paths = registryPaths(root);
    const registry = new JobRegistry(paths, { lockTimeoutSec: 120 });
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    let restartWindow = false;
    let sentDuringRestart = 0;
    let terminalsSentDuringRestart = 0;
    let enoughSentWhileDown: () => void = () => undefined;
    const agent = new ScriptedAgent(registry, { url }, SCRIPT, (jobId, seq, event) => {
      sentAt.set(`${jobId}:${seq}`, performance.now());
      if (event === 'completed') terminalsSent += 1;
      // Restart in the middle of the terminal events: a quarter of them sent, the rest still to come.
      if (broker && !restarting && terminalsSent >= jobs / 4) {
        restartedAfter = finished;
        restarting = restart(broker);
      }
      if (!restartWindow) return;
      sentDuringRestart += 1;
      if (event === 'completed' || event === 'error') terminalsSentDuringRestart += 1;
      if (terminalsSentDuringRestart >= DOWN_FOR_TERMINALS(jobs)) enoughSentWhileDown();
    });
    // Stop the broker, keep it down while agents publish terminal events into the void, start it again.
    const restart = async (control: BrokerControl): Promise<void> => {
      await control.stop();
      restartWindow = true;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, MAX_DOWNTIME_MS);
        enoughSentWhileDown = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      await control.start();
      restartWindow = false;
    };
    let finished = 0;
    let terminalsSent = 0;
    let reconnects = 0;
    let sessionsKept = 0;
    let restarting: Promise<void> | undefined;
    let restartedAfter: number | undefined;
    const started = performance.now();
    const one = async (): Promise<DelegateResult> => {
      let jobId = '';
      const result = await delegateJob({
        paths,
        broker: { url },
        env: {},
        prompt: 'benchmark job',
        worker: { name: 'scripted', session: 'none', agent },
        type: 'direct',
        maxIterations: 1,
        timeoutSec: 180,
        idleTimeoutSec: 120,
        expectedArtifacts: [],
        workdir: root,
        compat: false,
        publisherArgv: ['refinery', 'jobs', 'publish'],
        exitGraceMs: 60_000,
        hooks: {
          registered: (record) => {
            jobId = record.job_id;
          },
          diagnostic: (d) => {
            if (d.kind !== 'reconnected') return;
            reconnects += 1;
            if (d.sessionPresent) sessionsKept += 1;
          },
          event: (payload) => {
            const sent = sentAt.get(`${jobId}:${payload.seq}`);
            if (sent !== undefined) latencies.push(performance.now() - sent);
          },
        },
      });
      finished += 1;
      return result;
    };
    const results = await Promise.all(Array.from({ length: jobs }, one));
    await restarting;
    const wallMs = performance.now() - started;
    return {
      label,
      jobs,
      wallMs,
      completed: results.filter((r) => r.outcome === 'completed').length,
      lostTerminals: results.filter((r) => r.outcome !== 'completed' || r.via !== 'event').length,
      latencies,
      reconnects,
      sessionsKept,
      sentDuringRestart,
      terminalsSentDuringRestart,
      ...(restartedAfter !== undefined ? { restartedAfter } : {}),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function summarize(report: RunReport) {
  const sorted = [...report.latencies].sort((a, b) => a - b);
  return {
    jobsPerSec: report.jobs / (report.wallMs / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    events: sorted.length,
  };
}

function line(report: RunReport): string {
  const s = summarize(report);
  return [
    `${report.label}:`,
    `  jobs ${report.jobs}, completed ${report.completed}, lost terminal events ${report.lostTerminals}`,
    `  wall ${(report.wallMs / 1000).toFixed(1)} s, ${s.jobsPerSec.toFixed(1)} jobs/s, ${s.events} events seen`,
    `  publish->subscriber latency p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`,
    ...(report.restartedAfter !== undefined
      ? [
          `  broker restarted once, once a quarter of the terminal events were sent (${report.restartedAfter} finished); ${report.reconnects} live subscribers reconnected, ${report.sessionsKept} with their session kept`,
          `  events published while the broker was down: ${report.sentDuringRestart} (${report.terminalsSentDuringRestart} terminal)`,
        ]
      : []),
  ].join('\n');
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { jobs: { type: 'string', default: '1000' } } });
  const jobs = Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 2) {
    process.stderr.write(`--jobs '${values.jobs}' must be an integer >= 2\n`);
    return 64;
  }
  process.stdout.write(
    `bench/jobs: ${jobs} concurrent delegate jobs, scripted agents (${SCRIPT.join(' -> ')}), ${os.availableParallelism()} cores\n\n`,
  );

  const mosquitto = await startMosquitto({ maxQueued: 100_000 });
  let main: RunReport;
  try {
    main = await runWorkload('mosquitto 2.x (restarted mid-run)', mosquitto.url, jobs, mosquitto);
  } finally {
    await mosquitto.dispose();
  }
  process.stdout.write(`${line(main)}\n\n`);

  const aedes = await startEmbeddedBroker();
  let peer: RunReport;
  try {
    peer = await runWorkload('peer: embedded aedes (no restart)', aedes.url, jobs);
  } finally {
    await aedes.close();
  }
  process.stdout.write(`${line(peer)}\n\n`);

  const m = summarize(main);
  const p = summarize(peer);
  process.stdout.write(
    [
      'ratios (mosquitto with restart / aedes peer):',
      `  jobs/s ${(m.jobsPerSec / p.jobsPerSec).toFixed(2)}x, p50 latency ${(m.p50 / p.p50).toFixed(2)}x, p99 latency ${(m.p99 / p.p99).toFixed(2)}x`,
      '',
      main.lostTerminals === 0 && peer.lostTerminals === 0
        ? 'OK: zero lost terminal events'
        : `FAIL: lost terminal events (mosquitto ${main.lostTerminals}, aedes ${peer.lostTerminals})`,
      '',
    ].join('\n'),
  );
  return main.lostTerminals === 0 && peer.lostTerminals === 0 ? 0 : 1;
}

process.exitCode = await main();
