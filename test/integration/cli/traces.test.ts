import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { SCRIPTED_AGENT } from '../jobs/support.ts';
import { WatchProcess } from '../watch/watch-process.ts';

// A run exported as one OpenTelemetry trace to a real OTLP/HTTP receiver on 127.0.0.1, through
// the real CLI: the spans' links and attributes, the TRACEPARENT a stage's processes get, no
// secret in any span, a dead collector, and nothing of the SDK loaded when export is off.

const JUDGE_KEY = 'judge-key-7f3a9c1e5b2d8a4f';
const PARAM_KEY = 'sk-proj-Zq8vX2mN4bL6kJ9hG3fD5sA7';

const PIPELINE = `pipeline: demo
params:
  token: { type: string }
stages:
  hello:
    run: "printf '%s' \\"$TRACEPARENT\\" > \${outputs.o}; echo \\"token \${params.token}\\""
    outputs: { o: out/traceparent.txt }
  each:
    foreach: [alpha, beta]
    run: "echo \${item} > \${outputs.o}"
    outputs: { o: "out/\${item}.txt" }
  ask:
    task: ask
    needs: [hello]
    outputs: { answer: out/answer.txt, shell: out/shell-traceparent.txt }
`;

const ASK_TASK = `import { writeFileSync } from 'node:fs';
import { defineTask, z } from 'refinery/task';
import { llmClientFor } from ${JSON.stringify(path.join(REPO_ROOT, 'src/workflows/refine/task-support.ts'))};

const schema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false };

export default defineTask({
  name: 'ask',
  params: z.object({}),
  outputs: { answer: {}, shell: {} },
  async run(ctx) {
    const client = llmClientFor(ctx, { config: 'refinery.config.yaml' });
    const request = { tag: 'evaluate', prompt: 'Say hi', jsonSchema: { name: 'answer', schema } };
    const first = await client.call('judge', request, ctx.signal);
    // The same request again: answered by the local cache.
    await client.call('judge', request, ctx.signal);
    writeFileSync(ctx.outputs.answer, first.text);
    const shell = await ctx.$\`printf '%s' "\\\${TRACEPARENT:-}"\`;
    writeFileSync(ctx.outputs.shell, shell.stdout);
    ctx.progress(0.5, 'half way');
    ctx.report({ kind: 'warning', message: 'the judge key is ' + process.env.JUDGE_API_KEY });
    return { summary: 'asked with ' + process.env.JUDGE_API_KEY };
  },
});
`;

const backends = (url: string): string => `backends:
  judge:
    kind: openai
    model: test-model
    base_url: ${url}
    api_key_env: JUDGE_API_KEY
    price: { input_per_mtok: 1, output_per_mtok: 2 }
`;

let project: TempProject | undefined;
let receiver: OtlpReceiver | undefined;
let model: FakeOpenAiServer | undefined;

afterEach(async () => {
  project?.cleanup();
  project = undefined;
  await receiver?.close();
  receiver = undefined;
  await model?.close();
  model = undefined;
});

async function demoProject(extraConfig = ''): Promise<TempProject> {
  model = await startFakeOpenAiServer(() => ({ kind: 'content', content: '{"text":"hi"}', promptTokens: 12, completionTokens: 3 }));
  return tempProject({
    'pipelines/demo.yaml': PIPELINE,
    'tasks/ask.ts': ASK_TASK,
    'refinery.config.yaml': backends(model.url) + extraConfig,
  });
}

function byName(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.find((s) => s.name === name);
  if (!found) throw new Error(`no span '${name}' among ${spans.map((s) => s.name).join(', ')}`);
  return found;
}

/** The trace id and span id a TRACEPARENT names. */
function parsed(traceparent: string): { traceId: string; spanId: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent.trim());
  if (!match) throw new Error(`not a TRACEPARENT: '${traceparent}'`);
  return { traceId: match[1] as string, spanId: match[2] as string };
}

const env = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({ JUDGE_API_KEY: JUDGE_KEY, REFINERY_NO_PRECHECK: '1', ...extra });

describe('traces', () => {
  it('traces - protobuf export: one trace of run, stage, foreach, model-call spans with their attributes; TRACEPARENT in a run: stage and in a task $ names its stage span; no secret in any span', async () => {
    project = await demoProject();
    receiver = await startOtlpReceiver();
    const result = await runCli(['run', 'demo', '-p', `token=${PARAM_KEY}`], {
      cwd: project.root,
      env: env({
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: 'refinery-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=ci',
      }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(receiver.requests.every((r) => r.contentType === 'application/x-protobuf' && r.path === '/v1/traces')).toBe(true);
    const spans = receiver.spans();

    const root = byName(spans, 'run demo');
    expect(root.parentSpanId).toBe('');
    expect(root.attributes).toMatchObject({
      'refinery.pipeline': 'demo',
      'refinery.run.params': ['token'],
      'refinery.run.outcome': 'succeeded',
      'refinery.run.count.succeeded': 4,
    });
    expect(String(root.attributes['refinery.run.id'])).toMatch(/^\d{8}T\d{9}Z-/);
    expect(root.resource).toMatchObject({ 'service.name': 'refinery-test', 'deployment.environment': 'ci' });
    // One trace: every span is in the root's.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([root.traceId]));

    const hello = byName(spans, 'stage hello');
    expect(hello.parentSpanId).toBe(root.spanId);
    expect(hello.attributes).toMatchObject({
      'refinery.stage.id': 'hello',
      'refinery.stage.status': 'succeeded',
      'refinery.stage.outcome': 'ran',
      'refinery.stage.cache': 'miss',
      'refinery.stage.attempts': 1,
    });
    expect(String(hello.attributes['refinery.stage.reason'])).toContain('never run');
    expect(hello.startMs).toBeGreaterThanOrEqual(root.startMs);
    expect(hello.endMs).toBeLessThanOrEqual(root.endMs);

    const alpha = byName(spans, 'stage each[alpha]');
    expect(alpha.parentSpanId).toBe(root.spanId);
    expect(alpha.attributes).toMatchObject({ 'refinery.stage.name': 'each', 'refinery.foreach.item': 'alpha' });

    // The TRACEPARENT a run: command saw names its stage's span; so does the one a task's $ saw.
    expect(parsed(readFileSync(project.path('out/traceparent.txt'), 'utf8'))).toEqual({ traceId: root.traceId, spanId: hello.spanId });
    const ask = byName(spans, 'stage ask');
    expect(ask.attributes['refinery.task']).toBe('ask');
    expect(parsed(readFileSync(project.path('out/shell-traceparent.txt'), 'utf8'))).toEqual({ traceId: root.traceId, spanId: ask.spanId });
    expect(ask.events.map((e) => e.name)).toEqual(expect.arrayContaining(['progress', 'warning']));

    const calls = spans.filter((s) => s.name === 'chat test-model');
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call.parentSpanId).toBe(ask.spanId);
    const [made, cached] = [
      calls.find((c) => c.attributes['refinery.llm.cache_hit'] === false),
      calls.find((c) => c.attributes['refinery.llm.cache_hit'] === true),
    ];
    expect(made?.kind).toBe(3); // SPAN_KIND_CLIENT
    expect(made?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'test-model',
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'refinery.llm.backend': 'judge',
      'refinery.llm.tag': 'evaluate',
      'refinery.llm.schema_route': 'native',
      'refinery.llm.schema_via': 'response_format',
      'refinery.llm.attempts': 1,
    });
    expect(made?.attributes['refinery.llm.cost_usd']).toBeCloseTo((12 * 1 + 3 * 2) / 1e6, 12);
    expect(cached?.attributes).toMatchObject({ 'refinery.llm.cache': 'local', 'refinery.llm.cost_usd': 0 });

    // The key in a param value, in a command's output, a warning and a summary: in no span.
    const everything = Buffer.concat(receiver.requests.map((r) => r.body)).toString('latin1');
    expect(everything).not.toContain(PARAM_KEY);
    expect(everything).not.toContain(JUDGE_KEY);
    expect(JSON.stringify(spans)).not.toContain(JUDGE_KEY);
    expect(String(ask.attributes['refinery.stage.summary'])).toContain('[redacted');
  });

  it('traces - http/json through telemetry: in refinery.config.yaml: the header comes from the variable it names and is in no file or log', async () => {
    receiver = await startOtlpReceiver();
    project = await demoProject(
      `telemetry:\n  endpoint: ${receiver.url}\n  protocol: http/json\n  service_name: from-file\n  headers_from_env: { Authorization: TRACES_WRITE_TOKEN }\n`,
    );
    const token = 'pylf_v1_us_Wq2Ek9Lr5Tz8Yx3Cv6Bn1Mh4';
    const result = await runCli(['run', 'demo', '-p', 'token=plain', '-v'], { cwd: project.root, env: env({ TRACES_WRITE_TOKEN: token }) });
    expect(result.code).toBe(0);
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((r) => r.contentType === 'application/json' && r.headers.authorization === token)).toBe(true);
    const spans = receiver.spans();
    expect(byName(spans, 'run demo').resource['service.name']).toBe('from-file');
    expect(byName(spans, 'stage hello').parentSpanId).toBe(byName(spans, 'run demo').spanId);
    expect(`${result.stdout}${result.stderr}`).not.toContain(token);
    const runLog = readFileSync(
      path.join(project.root, '.refinery', 'runs', String(byName(spans, 'run demo').attributes['refinery.run.id']), 'events.jsonl'),
      'utf8',
    );
    expect(runLog).not.toContain(token);
  });

  it('traces - a collector that refuses connections, and one that never answers: the run succeeds, one warning, the flush gives up within 2 s', async () => {
    for (const kind of ['refused', 'silent'] as const) {
      project = await demoProject();
      let server: Server | undefined;
      let endpoint: string;
      if (kind === 'refused') {
        // A port that was free a moment ago: nothing listens on it.
        const probe = createServer();
        await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
        endpoint = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
        await new Promise((resolve) => probe.close(resolve));
      } else {
        // Accepts the connection, reads, never answers.
        server = createServer((socket) => socket.on('data', () => {}));
        await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
        endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      }
      let started = Date.now();
      const baseline = await runCli(['run', 'demo', '-p', 'token=t', '--force'], { cwd: project.root, env: env({}) });
      expect(baseline.code, baseline.stdout + baseline.stderr).toBe(0);
      const baselineTook = Date.now() - started;
      started = Date.now();
      const result = await runCli(['run', 'demo', '-p', 'token=t', '--force'], {
        cwd: project.root,
        env: env({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
      });
      const took = Date.now() - started;
      server?.close();
      expect(result.code, kind).toBe(0);
      const warnings = result.stderr.split('\n').filter((l) => l.includes('traces: cannot send spans'));
      expect(warnings, kind).toHaveLength(1);
      expect(result.stdout).toContain('done: demo: 4 succeeded');
      // The export may add its 2 s flush at most; start-up on a shared machine differs by a few seconds more.
      expect(took - baselineTook, kind).toBeLessThan(2_000 + 3_000);
      project.cleanup();
      project = undefined;
      await model?.close();
      model = undefined;
    }
  });

  it('traces - watch: one trace per triggered run, each with its own root and the stage that ran', async () => {
    receiver = await startOtlpReceiver();
    project = tempProject({
      'src/a.txt': 'a1\n',
      'pipelines/w.yaml':
        'pipeline: w\nstages:\n  copy: { run: "cat src/a.txt > ${outputs.o}", inputs: [src/a.txt], outputs: { o: out/a.txt } }\n',
    });
    const watcher = new WatchProcess([], project.root, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
    try {
      await watcher.nth(1, 'run-end');
      project.write('src/a.txt', 'a2\n');
      await watcher.nth(2, 'run-end');
      const runIds = watcher.events.filter((e) => e.type === 'run-end').map((e) => e.runId);
      const isRoot = (s: ReceivedSpan): boolean => s.name === 'run w';
      const spans = await receiver.until((all) => all.filter(isRoot).length >= 2 && all.filter((x) => x.name === 'stage copy').length >= 2);
      const [first, second] = spans.filter(isRoot);
      expect(new Set([first?.attributes['refinery.run.id'], second?.attributes['refinery.run.id']])).toEqual(new Set(runIds));
      expect(first?.traceId).not.toBe(second?.traceId);
      const copies = spans.filter((s) => s.name === 'stage copy');
      expect(copies.map((c) => c.traceId).sort()).toEqual([first?.traceId, second?.traceId].sort());
    } finally {
      await watcher.stop();
    }
  });

  it('traces - a delegated job: its span is a child of the stage that handed it over, with agent and outcome, and no job token in any span', async () => {
    receiver = await startOtlpReceiver();
    const agent = ['env', 'AGENT_SCRIPT=started,write-expected:# Report,completed:report written', process.execPath, SCRIPTED_AGENT];
    project = tempProject({
      'pipelines/handover.yaml': `pipeline: handover
stages:
  work:
    task: delegate
    with:
      prompt: write the report
      agent: scripted
      agent_kind: command
      command: ${JSON.stringify(agent)}
      timeout: 30
      idle_timeout: 30
    outputs: { record: out/job.json, report: out/report.md }
`,
    });
    const result = await runCli(['run', 'handover'], { cwd: project.root, env: env({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }) });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const spans = receiver.spans();
    const stage = byName(spans, 'stage work');
    const job = spans.find((s) => s.name.startsWith('job '));
    expect(job, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(job?.parentSpanId).toBe(stage.spanId);
    expect(job?.traceId).toBe(stage.traceId);
    expect(job?.attributes).toMatchObject({
      'refinery.job.agent': 'scripted',
      'refinery.job.outcome': 'completed',
      'refinery.job.type': 'direct',
    });
    const jobId = String(job?.attributes['refinery.job.id']);
    expect(job?.name).toBe(`job ${jobId}`);
    // The job's registry record holds the token the agent publishes with; no span carries it.
    const registry = JSON.parse(readFileSync(project.path(`.mam/jobs/${jobId}.json`), 'utf8')) as { auth_token?: string };
    expect(registry.auth_token).toBeTruthy();
    expect(JSON.stringify(spans)).not.toContain(String(registry.auth_token));
  });

  it('traces - export off: no @opentelemetry module is loaded; on: they are', async () => {
    project = await demoProject();
    const hooks = project.write(
      'record-modules.mjs',
      `import { register } from 'node:module';\nregister(${JSON.stringify('data:text/javascript,')} + encodeURIComponent(${JSON.stringify(RECORDER)}), import.meta.url, { data: { file: process.env.MODULES_FILE } });\n`,
    );
    const modulesFile = project.path('modules.txt');
    const loaded = async (extra: NodeJS.ProcessEnv): Promise<string[]> => {
      writeFileSync(modulesFile, '');
      const result = await runCli(['run', 'demo', '-p', 'token=t', '--force'], {
        cwd: project?.root ?? '',
        env: env({ NODE_OPTIONS: `--import ${hooks}`, MODULES_FILE: modulesFile, ...extra }),
      });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      return readFileSync(modulesFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('@opentelemetry'));
    };
    expect(await loaded({})).toEqual([]);
    receiver = await startOtlpReceiver();
    expect((await loaded({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })).length).toBeGreaterThan(0);
  });
});

/** Module hooks that append every module URL resolved in the process to the file they are given. */
const RECORDER = `import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (file) appendFileSync(file, result.url + '\\n');
  return result;
}`;
