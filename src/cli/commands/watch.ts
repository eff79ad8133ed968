import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Command, CommandIo } from '../command.ts';
import { printDiagnostics } from '../session.ts';
import { findPipelineFile } from '../../engine/session/find-pipeline.ts';
import { EventBus } from '../../engine/events/bus.ts';
import type { Tracing } from '../../engine/telemetry/tracing.ts';
import { startTracing } from '../tracing.ts';
import { terminalSink } from '../terminal-sink.ts';
import { jsonlSink } from '../../engine/events/jsonl-sink.ts';
import { mqttSink, type MqttSink } from '../../engine/events/mqtt-sink.ts';
import { acquireProjectLock } from '../../engine/state/project-lock.ts';
import { removeLeftoverStaging } from '../../engine/executor/staging.ts';
import { prepareStateFolders } from '../../engine/state/state-folders.ts';
import { writeProblem } from '../../engine/state/write-problem.ts';
import { reportLockRefusal, reportWriteProblems, stateWarn } from '../state-report.ts';
import { loadPipeline, type LoadedPipeline } from '../../engine/session/open-pipeline.ts';
import { WatchDaemon } from '../../engine/watch/watch-daemon.ts';
import type { BusyPolicy, WatchNotice } from '../../engine/watch/types.ts';
import type { BrokerConfig } from '../../workflows/mqtt/broker-config.ts';
import { concurrencyFlag, parseOrReport, parseParamFlags } from '../flags.ts';
import { checkUiSettings } from './ui.ts';
import type { Dashboard } from '../../ui/dashboard.ts';
import { serveDaemon, type ServeNotice } from '../daemon/serve.ts';

const USAGE = `Usage: refinery watch [PIPELINE...] [options]

Brings every stage up to date (as \`refinery run\` does), then watches the pipelines' inputs
and files and reruns only the stages a change affects. Events go to the console, to
.refinery/runs/<run-id>/events.jsonl and over MQTT (topics refinery/<pipeline>/<run-id>/<stage>/<event>).
Ctrl-C stops watching and lets running stages finish; a second Ctrl-C aborts them.

Options:
  -p, --param KEY=VALUE   set a pipeline param (repeatable; each pipeline takes the ones it declares)
  -j, --concurrency N     stages at once (default: number of cores)
  -k, --keep-going        keep running stages that do not depend on a failure
      --debounce MS       wait for MS of quiet after a change before running (default 50)
      --recheck MS        run again, MS after a run, the stages whose stale_if still holds
                          (a MassGen turn in progress), with no file changing (default
                          30000; 0: only when files change)
      --on-busy POLICY    a change during a run: queue (one follow-up run, the default) or
                          restart (abort the run's stages through their signal and run again)
      --broker URL        publish to this MQTT broker (default: MQTT_BROKER, else an embedded
                          broker on 127.0.0.1)
      --mqtt-port N       port of the embedded broker (default 1883; 0 picks a free one)
      --no-mqtt           do not publish over MQTT
      --json              print events as JSON lines instead of the console view
  -v, --verbose           also show up-to-date stages and log lines
      --ui                serve the live dashboard (as refinery ui does) fed by this watch; its
                          URL, with the token, is printed on stderr
      --ui-port N         the dashboard's port (default: a free one)
      --allow-actions     let the dashboard abort the running stages

Exit codes: 0 stopped by Ctrl-C/SIGTERM; 1 another refinery holds the project or the broker
failed; 2 a pipeline file or the arguments are wrong (nothing ran).`;

interface WatchFlags {
  param: string[];
  concurrency?: string;
  'keep-going': boolean;
  debounce: string;
  recheck: string;
  'on-busy': string;
  broker?: string;
  'mqtt-port': string;
  'no-mqtt': boolean;
  json: boolean;
  verbose: boolean;
  ui: boolean;
  'ui-port'?: string;
  'allow-actions': boolean;
}

function parseFlags(argv: string[]): { flags: WatchFlags; positionals: string[] } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      param: { type: 'string', short: 'p', multiple: true, default: [] },
      concurrency: { type: 'string', short: 'j' },
      'keep-going': { type: 'boolean', short: 'k', default: false },
      debounce: { type: 'string', default: '50' },
      recheck: { type: 'string', default: '30000' },
      'on-busy': { type: 'string', default: 'queue' },
      broker: { type: 'string' },
      'mqtt-port': { type: 'string', default: '1883' },
      'no-mqtt': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      verbose: { type: 'boolean', short: 'v', default: false },
      ui: { type: 'boolean', default: false },
      'ui-port': { type: 'string' },
      'allow-actions': { type: 'boolean', default: false },
    },
  });
  return { flags: values as WatchFlags, positionals };
}

interface Settings {
  concurrency: number;
  debounceMs: number;
  recheckMs: number;
  onBusy: BusyPolicy;
  mqttPort: number;
  overrides: Record<string, string>;
}

function checkSettings(flags: WatchFlags): { settings?: Settings; error?: string } {
  const jobs = concurrencyFlag(flags.concurrency);
  if ('error' in jobs) return { error: jobs.error };
  const concurrency = jobs.value;
  const debounceMs = Number(flags.debounce);
  if (!/^\d+$/.test(flags.debounce) || debounceMs > 60_000)
    return { error: `--debounce ${flags.debounce}: expected milliseconds, 0 to 60000` };
  const recheckMs = Number(flags.recheck);
  if (!/^\d+$/.test(flags.recheck) || recheckMs > 86_400_000)
    return { error: `--recheck ${flags.recheck}: expected milliseconds, 0 to 86400000` };
  if (flags['on-busy'] !== 'queue' && flags['on-busy'] !== 'restart')
    return { error: `--on-busy ${flags['on-busy']}: expected queue or restart` };
  const mqttPort = Number(flags['mqtt-port']);
  if (!/^\d+$/.test(flags['mqtt-port']) || mqttPort > 65535)
    return { error: `--mqtt-port ${flags['mqtt-port']}: expected a port number 0-65535` };
  const parsed = parseParamFlags(flags.param);
  if (parsed.error) return { error: parsed.error };
  return { settings: { concurrency, debounceMs, recheckMs, onBusy: flags['on-busy'], mqttPort, overrides: parsed.params } };
}

async function loadAll(io: CommandIo, args: string[], overrides: Record<string, string>): Promise<LoadedPipeline[] | undefined> {
  const loaded: LoadedPipeline[] = [];
  for (const arg of args.length > 0 ? args : [undefined]) {
    const found = findPipelineFile(io.cwd, arg);
    if (!found.file) {
      io.stderr.write(`refinery watch: ${found.error}\n`);
      return undefined;
    }
    const outcome = await loadPipeline(io.cwd, found.file, overrides, { warn: stateWarn(io) });
    if (!outcome.ok) {
      printDiagnostics(io, outcome.diagnostics, new Map([[outcome.file, outcome.source]]));
      return undefined;
    }
    if (loaded.some((p) => p.spec.name === outcome.pipeline.spec.name)) {
      io.stderr.write(`refinery watch: pipeline '${outcome.pipeline.spec.name}' is named twice\n`);
      return undefined;
    }
    loaded.push(outcome.pipeline);
  }
  for (const key of Object.keys(overrides)) {
    if (!loaded.some((p) => key in p.spec.params)) {
      io.stderr.write(`refinery watch: --param ${key}: no pipeline being watched has a param '${key}'\n`);
      return undefined;
    }
  }
  return loaded;
}

function renderNotice(io: CommandIo, n: WatchNotice, verbose: boolean): void {
  const rel = (file: string): string => path.relative(io.cwd, file) || file;
  const line = (text: string): void => {
    io.stderr.write(`watch: ${text}\n`);
  };
  switch (n.kind) {
    case 'watching':
      return line(`watching ${n.paths} path${n.paths === 1 ? '' : 's'} for ${n.pipelines.join(', ')} (Ctrl-C to stop)`);
    case 'changes':
      if (verbose) line(`${n.paths.length} changed: ${n.paths.slice(0, 5).join(', ')}${n.paths.length > 5 ? ', …' : ''}`);
      return;
    case 'reloaded':
      return line(`${rel(n.file)} changed: pipeline '${n.pipeline}' reloaded`);
    case 'reload-failed':
      line(`${rel(n.file)} changed but is invalid; '${n.pipeline}' keeps running its last good version`);
      return printDiagnostics(io, n.diagnostics, new Map([[n.file, n.source]]));
    case 'stages-added':
      return line(`${n.pipeline}: new ${n.stages.length === 1 ? 'stage' : 'stages'} ${n.stages.join(', ')}`);
    case 'stages-retired':
      return line(`${n.pipeline}: retired ${n.stages.join(', ')} (its files are gone)`);
    case 'restarting':
      return line(`${n.pipeline}: inputs of ${n.stages.join(', ')} changed during the run; aborting it to run again`);
    case 'recheck':
      return line(`${n.pipeline}: ${n.stages.join(', ')} asked to be redone (stale_if); running again`);
    case 'outside-root':
      return line(`${n.pipeline}: input ${n.path} is outside the project; it is not watched`);
    case 'task-changed':
      return line(`${n.file} changed: its stages run again with the new code`);
    case 'watch-error':
      return line(`error: ${n.message}`);
    case 'stopping':
      return line(n.running.length > 0 ? `stopping: waiting for ${n.running.join(', ')} to finish (Ctrl-C again to abort)` : 'stopping');
  }
}

function renderServeNotice(io: CommandIo, n: ServeNotice, verbose: boolean): void {
  const line = (text: string): void => {
    io.stderr.write(`watch: ${text}\n`);
  };
  switch (n.kind) {
    case 'serving':
      return line('refinery run, plan and status in this project are answered by this watch');
    case 'not-serving':
      return line(`refinery run elsewhere in this project is refused while this watch runs: ${n.reason}`);
    case 'served':
      if (verbose) line(`answered a ${n.command} (exit ${n.exit})`);
      return;
    case 'fallback':
      if (verbose) line(`a ${n.command} checks by itself: ${n.reason}`);
      return;
  }
}

interface Mqtt {
  sink: MqttSink | undefined;
  url: string | undefined;
  close(): Promise<void>;
}

async function openMqtt(io: CommandIo, flags: WatchFlags, port: number): Promise<Mqtt | string> {
  const none: Mqtt = { sink: undefined, url: undefined, close: async () => {} };
  if (flags['no-mqtt']) return none;
  const { brokerFromEnv, brokerFromUrl, redactUrl } = await import('../../workflows/mqtt/broker-config.ts');
  const { MqttConnection } = await import('../../workflows/mqtt/client.ts');
  let config: BrokerConfig | undefined;
  try {
    config = flags.broker ? brokerFromUrl(flags.broker) : brokerFromEnv(io.env);
  } catch (error) {
    return (error as Error).message;
  }
  let broker: { url: string; close(): Promise<void> } | undefined;
  if (!config) {
    const { startEmbeddedBroker } = await import('../../workflows/broker/embedded-broker.ts');
    try {
      broker = await startEmbeddedBroker({ port });
    } catch (error) {
      if (port === 0) return (error as Error).message;
      broker = await startEmbeddedBroker({ port: 0 });
      io.stderr.write(`watch: port ${port} is taken; the embedded broker uses another one\n`);
    }
    config = { url: broker.url };
  }
  let connection: Awaited<ReturnType<typeof MqttConnection.open>>;
  try {
    connection = await MqttConnection.open(config, {
      clientId: `refinery-watch-${process.pid}`,
      clean: true,
      connectTimeoutMs: 5000,
      signal: io.signal,
    });
  } catch (error) {
    await broker?.close();
    return (error as Error).message;
  }
  io.stderr.write(
    `watch: events on ${redactUrl(config.url)}${broker ? ' (embedded broker)' : ''}, topics refinery/<pipeline>/<run-id>/<stage>/<event>\n`,
  );
  const sink = mqttSink(connection, { onError: (e) => io.stderr.write(`watch: MQTT publish failed: ${e.message}\n`) });
  return {
    sink,
    url: config.url,
    async close() {
      await Promise.race([sink.flush(), new Promise((r) => setTimeout(r, 2000))]);
      await connection.close(true);
      await broker?.close();
    },
  };
}

function waitFor(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

async function run(argv: string[], io: CommandIo): Promise<number> {
  const parsed = parseOrReport(io, 'watch', USAGE, () => parseFlags(argv));
  if (!parsed) return 2;
  const { flags, positionals } = parsed;
  const { settings, error } = checkSettings(flags);
  if (!settings) {
    io.stderr.write(`refinery watch: ${error}\n`);
    return 2;
  }
  const pipelines = await loadAll(io, positionals, settings.overrides);
  if (!pipelines) return 2;
  const ui = flags.ui
    ? await checkUiSettings(io.cwd, {
        ...(flags['ui-port'] !== undefined ? { port: flags['ui-port'] } : {}),
        allowActions: flags['allow-actions'],
      })
    : undefined;
  if (typeof ui === 'string') {
    io.stderr.write(`refinery watch: ${ui}\n`);
    return 2;
  }
  const tracing = await startTracing(io, 'watch');
  if (tracing === 'error') return 2;
  try {
    return await watchTraced(io, flags, pipelines, settings, ui, tracing);
  } finally {
    await tracing?.shutdown();
  }
}

async function watchTraced(
  io: CommandIo,
  flags: WatchFlags,
  pipelines: LoadedPipeline[],
  settings: Settings,
  ui: Exclude<Awaited<ReturnType<typeof checkUiSettings>>, string> | undefined,
  tracing: Tracing | undefined,
): Promise<number> {
  const warn = stateWarn(io);
  const lock = acquireProjectLock(io.cwd, warn);
  if (!lock.ok) {
    reportLockRefusal(io, lock);
    return 1;
  }
  // Holding the lock, no other run is live: what killed runs left in staging can go.
  removeLeftoverStaging(io.cwd);
  try {
    try {
      prepareStateFolders(io.cwd, warn);
    } catch (error) {
      reportWriteProblems(io, [writeProblem(path.join(io.cwd, '.refinery'), error)]);
      return 1;
    }
    const mqtt = await openMqtt(io, flags, settings.mqttPort);
    if (typeof mqtt === 'string') {
      io.stderr.write(`refinery watch: ${mqtt}\n`);
      return 1;
    }
    let daemon: WatchDaemon | undefined;
    let dashboard: Dashboard | undefined;
    if (ui) {
      const { attachDashboard } = await import('../../ui/watch-attach.ts');
      try {
        dashboard = await attachDashboard({
          root: io.cwd,
          ...ui,
          pipelines: pipelines.map((p) => p.spec.name),
          overrides: settings.overrides,
          abort: () => daemon?.abort(),
        });
      } catch (error) {
        await mqtt.close();
        io.stderr.write(`refinery watch: the dashboard cannot serve on ${ui.host}:${ui.port}: ${(error as Error).message}\n`);
        return 1;
      }
      io.stderr.write(`watch: dashboard at ${dashboard.url}\n`);
    }
    daemon = await WatchDaemon.start({
      root: io.cwd,
      pipelines,
      overrides: settings.overrides,
      debounceMs: settings.debounceMs,
      recheckMs: settings.recheckMs,
      onBusy: settings.onBusy,
      concurrency: settings.concurrency,
      keepGoing: flags['keep-going'],
      notify: (n) => renderNotice(io, n, flags.verbose),
      warn,
      onRunEnd: (_pipeline, result) => reportWriteProblems(io, result.writeProblems),
      openRun(runId, pipeline) {
        const bus = new EventBus(runId, pipeline);
        const jsonl = jsonlSink(io.cwd, runId, warn);
        bus.subscribe(jsonl.sink);
        // One trace per triggered run.
        const trace = tracing?.forRun();
        if (trace) bus.subscribe(trace.sink);
        bus.subscribe(terminalSink(io, flags));
        if (mqtt.sink) bus.subscribe(mqtt.sink.sink);
        if (dashboard) bus.subscribe(dashboard.hub.sink);
        return { bus, close: () => reportWriteProblems(io, [jsonl.close()]), ...(trace ? { stageEnv: trace.stageEnv } : {}) };
      },
    });
    const server = await serveDaemon({
      root: io.cwd,
      daemon,
      baseIo: io,
      sinks: () => [...(mqtt.sink ? [mqtt.sink.sink] : []), ...(dashboard ? [dashboard.hub.sink] : [])],
      notify: (n) => renderServeNotice(io, n, flags.verbose),
    });
    await waitFor(io.signal);
    renderNotice(io, { kind: 'stopping', running: daemon.busy() }, flags.verbose);
    await server?.close();
    const onForce = (): void => daemon.abort();
    io.forceSignal.addEventListener('abort', onForce, { once: true });
    if (io.forceSignal.aborted) daemon.abort();
    await daemon.stop();
    io.forceSignal.removeEventListener('abort', onForce);
    await dashboard?.close();
    await mqtt.close();
    return 0;
  } finally {
    lock.release();
  }
}

export const watchCommand: Command = { name: 'watch', summary: 'Rerun what changed, as soon as it changes', usage: USAGE, run };
