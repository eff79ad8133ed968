// Early cutoff where it costs money: a brief that is re-normalized, or criteria that are made
// again, and come out the same must not start the model stages after them again. The model
// calls are counted at the fake OpenAI-compatible server; the response cache is emptied before
// each run, so every stage that starts calls the server.
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { REPO_ROOT, runCli, stageEnds, tempProject, type TempProject } from '../../helpers/project.ts';
import { judgeResponder } from './helpers/judge-responder.ts';

let server: FakeOpenAiServer;
let project: TempProject;

// brief: blank lines dropped; criteria: a model writes them from the brief; judge: a model
// evaluates the deliverable against them (it reads the criteria file as an input).
const PIPELINE = `pipeline: judged
params:
  budget: { type: number, default: 5 }
stages:
  brief:
    run: "sed '/^$/d' notes/brief.md > \${outputs.brief}"
    inputs: [notes/brief.md]
    outputs: { brief: out/brief.md }
  criteria:
    task: generate-criteria
    with: { task_file: out/brief.md, backend: writer, deliverable: [doc/README.md], budget_usd: "\${params.budget}" }
    inputs: [out/brief.md]
    outputs:
      criteria: { path: out/criteria.json, schema: eval-criteria }
      usage: { path: out/criteria.usage.json, schema: llm-usage }
  judge:
    task: evaluate-backend
    with: { backend: judge, criteria: out/criteria.json, task_file: out/brief.md, deliverable: [doc/README.md] }
    inputs: [out/criteria.json, out/brief.md, doc/README.md]
    outputs:
      verdict: { path: out/verdict.json, schema: verdict }
      critique: out/critique.md
      next_tasks: { path: out/next_tasks.json, schema: next-tasks }
`;

beforeAll(async () => {
  server = await startFakeOpenAiServer(judgeResponder({ scores: () => 6 }));
  project = tempProject({
    'refinery.config.yaml': `backends:
  writer: { kind: openai, base_url: "${server.url}", model: model-w }
  writer-b: { kind: openai, base_url: "${server.url}", model: model-w }
  judge: { kind: openai, base_url: "${server.url}", model: model-j }
  judge-b: { kind: openai, base_url: "${server.url}", model: model-k }
`,
    'pipelines/judged.yaml': PIPELINE,
    'notes/brief.md': 'Write a README for the tool.\nKeep it short.\n',
    'doc/README.md': '# Tool\n\nRun `tool --help`.\n',
  });
  cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
});

afterAll(async () => {
  await server.close();
  project.cleanup();
});

/** A run with an empty response cache: the stages it starts, and the model calls they made. */
async function run(...args: string[]): Promise<{ stages: Record<string, string>; calls: number }> {
  return runPipeline('judged', ...args);
}

async function runPipeline(pipeline: string, ...args: string[]): Promise<{ stages: Record<string, string>; calls: number }> {
  rmSync(project.path('.refinery/cache/llm'), { recursive: true, force: true });
  const before = server.requests.length;
  const result = await runCli(['run', pipeline, '--json', ...args], { cwd: project.root });
  expect(result.code, result.stderr).toBe(0);
  return { stages: stageEnds(result.stdout), calls: server.requests.length - before };
}

it('early cutoff - a re-made brief or criteria file that comes out the same starts no model call after it', async () => {
  const first = await run();
  expect(first.stages).toEqual({ brief: 'succeeded', criteria: 'succeeded', judge: 'succeeded' });
  expect(first.calls).toBeGreaterThanOrEqual(2);

  // A blank line in the note: the brief is made again, byte for byte the same; no model is asked.
  project.write('notes/brief.md', 'Write a README for the tool.\n\nKeep it short.\n');
  expect(await run()).toEqual({ stages: { brief: 'succeeded', criteria: 'fresh', judge: 'fresh' }, calls: 0 });

  // The criteria stage runs again (its budget param changed) and the model writes the same
  // criteria: one call for them, none for the judge.
  expect(await run('-p', 'budget=4')).toEqual({ stages: { brief: 'fresh', criteria: 'succeeded', judge: 'fresh' }, calls: 1 });
});

it('early cutoff - refine: criteria made again by another writer, the same criteria, start no judge', async () => {
  const params = ['session=cutoff', 'query=Write a README for the tool', 'deliverable=doc/README.md', 'judges=judge,judge-b'];
  const args = (writer: string): string[] => [...params, `writer=${writer}`].flatMap((p) => ['--param', p]);
  const first = await runPipeline('refine', ...args('writer'));
  expect(first.stages).toMatchObject({ criteria: 'succeeded', 'rounds#1.evaluate[judge]': 'succeeded', 'rounds#1.consensus': 'succeeded' });
  expect(first.calls).toBeGreaterThanOrEqual(3);
  // Another writer (the same model): criteria run again and come out the same. One call, for them;
  // the summary, which reads every usage file, is made again without a model.
  const again = await runPipeline('refine', ...args('writer-b'));
  expect(again.calls).toBe(1);
  expect(again.stages).toMatchObject({
    criteria: 'succeeded',
    'rounds#1.evaluate[judge]': 'fresh',
    'rounds#1.evaluate[judge-b]': 'fresh',
    'rounds#1.consensus': 'fresh',
  });
});
