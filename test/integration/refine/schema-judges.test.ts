// A whole refine session through the real CLI against model servers that behave like real ones towards
// the answer schema: answering within it (OpenAI structured outputs, Ollama's format), ignoring it for
// prose, refusing it (400), or answering garbage 30 % of the time.
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { strictSchemaProblems } from '../../../src/workflows/backends/strict-schema.ts';
import { DEFAULT_CRITERIA } from '../../../src/workflows/refine/criteria.ts';
import { startFakeOpenAiServer, type FakeOpenAiServer, type Responder } from '../../helpers/fake-openai-server.ts';
import { REPO_ROOT, runCli, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { garbageResponder, proseResponder, schemaFollowingResponder } from '../../helpers/schema-responders.ts';
import { invalidArtifacts, readJson } from './helpers/session-files.ts';

const JUDGES = ['judge-a', 'judge-b', 'judge-c'];
let server: FakeOpenAiServer | undefined;
let project: TempProject | undefined;

afterEach(async () => {
  await server?.close();
  project?.cleanup();
  server = undefined;
  project = undefined;
});

/** A project whose writer and judges all talk to one fake server; `extra` adds keys to a judge's entry. */
async function setup(responder: Responder, judges = JUDGES, extra: Record<string, string> = {}): Promise<TempProject> {
  server = await startFakeOpenAiServer(responder);
  const price = 'price: { input_per_mtok: 3, output_per_mtok: 15 }';
  const entries = judges.map(
    (j) => `  ${j}: { kind: openai, base_url: "${server?.url}", model: model-${j.slice(-1)}, ${price}${extra[j] ? `, ${extra[j]}` : ''} }`,
  );
  project = tempProject({
    'refinery.config.yaml': `backends:\n  writer: { kind: openai, base_url: "${server.url}", model: model-w, ${price} }\n${entries.join('\n')}\n`,
    'deliverable/README.md': '# Tool\n\nRun `tool --help`.\n',
    'previous/README.md': '# Tool\n',
  });
  cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
  return project;
}

function refine(p: TempProject, session: string, judges = JUDGES, flags: string[] = ['--json']): Promise<CliResult> {
  const params = {
    session,
    query: 'Write a README for the tool',
    deliverable: 'deliverable/README.md',
    previous: 'previous/README.md',
    writer: 'writer',
    judges: judges.join(','),
    guard: judges[0] as string,
  };
  return runCli(['run', 'refine', ...flags, ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`])], { cwd: p.root });
}

type Call = { tag: string; backend: string; schema?: string; valid?: boolean; cached: boolean };

/** Every call of the session, from its usage.json files. */
function sessionCalls(dir: string): Call[] {
  const summary = readJson(path.join(dir, 'summary.json'));
  return summary.usage.parts.flatMap((part: { file: string }) => readJson<{ calls: Call[] }>(path.join(dir, part.file)).calls);
}

describe('refine with schema-following, prose, refusing and garbage model servers', () => {
  it('refine - judges that answer within the schema they are sent: each call carries its exact strict schema, a whole session has 0 degraded artifacts, and an unchanged rerun makes 0 calls', async () => {
    const p = await setup(schemaFollowingResponder(), JUDGES, { 'judge-c': 'api: ollama' });
    const run = await refine(p, 'follow');
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr}`).toBe(0);
    const dir = p.path('.refinery/sessions/follow');
    expect(invalidArtifacts(dir)).toEqual([]);
    const summary = readJson(path.join(dir, 'summary.json'));
    expect(summary.answers.degraded_artifacts).toEqual([]);
    expect(summary.answers.repairs).toBe(0);
    expect(summary.answers.first_try_valid).toBe(summary.answers.first_try);
    expect(summary.answers.first_try).toBe(server?.requests.length);
    expect(readJson(path.join(dir, 'criteria.json'))).toMatchObject({ source: 'model' });

    // Every request carried a schema in OpenAI's strict subset: response_format strict, or Ollama's format.
    const requests = server?.requests ?? [];
    for (const r of requests) {
      expect(r.schema, r.path).toBeDefined();
      expect(strictSchemaProblems(r.schema)).toEqual([]);
      if (r.body.model === 'model-c') expect(r.api).toBe('ollama');
      else expect(r).toMatchObject({ api: 'openai', strict: true });
    }
    // The judges' schema is built from the session: its criteria are the required keys of scores.
    const ids = readJson<{ criteria: Array<{ id: string }> }>(path.join(dir, 'criteria.json')).criteria.map((c) => c.id);
    const evaluation = requests.find((r) => r.prompt.includes('# Evaluation round 1'))?.schema as Record<string, any>;
    expect(evaluation.properties.scores).toMatchObject({ required: ids, additionalProperties: false });
    expect(Object.keys(evaluation.properties.scores.properties)).toEqual(ids);
    const calls = sessionCalls(dir);
    expect(calls.every((c) => c.valid === true)).toBe(true);
    expect(new Set(calls.filter((c) => c.backend === 'judge-c').map((c) => c.schema))).toEqual(new Set(['ollama_format']));
    expect(new Set(calls.filter((c) => c.backend !== 'judge-c').map((c) => c.schema))).toEqual(new Set(['response_format']));

    const before = requests.length;
    const again = await refine(p, 'follow-again');
    expect(again.code, again.stderr).toBe(0);
    expect(server?.requests.length).toBe(before);
    const cached = readJson(p.path('.refinery/sessions/follow-again/summary.json'));
    expect(cached.usage.this_run).toMatchObject({ calls: before, cached_calls: before, cost_usd: 0 });
  });

  it('refine - judges that ignore the schema and answer prose: MassGen-shaped default criteria, every judge degraded with its reason, every artifact valid', async () => {
    const p = await setup(proseResponder());
    const run = await refine(p, 'prose');
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr}`).toBe(0);
    const dir = p.path('.refinery/sessions/prose');
    expect(invalidArtifacts(dir)).toEqual([]);
    const criteria = readJson(path.join(dir, 'criteria.json'));
    expect(criteria).toMatchObject({ source: 'default', criteria: DEFAULT_CRITERIA.map((c) => ({ id: c.id, category: c.category })) });
    for (const c of criteria.criteria) {
      expect(c.anti_patterns.length).toBeGreaterThanOrEqual(2);
      expect(Object.keys(c.score_anchors)).toEqual(['3', '5', '7', '9']);
    }
    expect(criteria.warnings[0]).toMatch(/criteria generation failed \(malformed output after one repair retry: no JSON object found/);
    for (const j of JUDGES)
      expect(readJson(path.join(dir, `round_001/judges/${j}/verdict.json`))).toMatchObject({
        status: 'degraded',
        degraded_reason: expect.stringMatching(/^malformed output after one repair retry: no JSON object found/),
      });
    const summary = readJson(path.join(dir, 'summary.json'));
    expect(summary.answers.first_try_valid).toBe(0);
    expect(summary.answers.degraded_artifacts).toEqual(
      expect.arrayContaining([
        'criteria.json',
        'regression.json',
        'round_001/verdict.json',
        ...JUDGES.map((j) => `round_001/judges/${j}/verdict.json`),
      ]),
    );
    // The repair quoted what was wrong.
    expect(
      server?.requests.some(
        (r) => r.prompt.includes('## Your previous answer could not be used') && r.prompt.includes('no JSON object found'),
      ),
    ).toBe(true);
  });

  it('refine - 30 % garbage: each failed answer is repaired (quoting ajv) or degraded with its reason, and every artifact in place validates', async () => {
    const judges = ['judge-a', 'judge-b', 'judge-c', 'judge-d', 'judge-e'];
    // The seed is fixed so the run is reproducible; the assertions below check it exercises every path.
    const garbage = garbageResponder(30, 's5', schemaFollowingResponder());
    const p = await setup(garbage, judges);
    const run = await refine(p, 'garbage', judges);
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr}`).toBe(0);
    const dir = p.path('.refinery/sessions/garbage');
    expect(invalidArtifacts(dir)).toEqual([]);
    const requests = server?.requests ?? [];
    const isRepair = (prompt: string) => prompt.includes('## Your previous answer could not be used');
    const garbledFirst = garbage.garbled.filter((r) => !isRepair(r.prompt));
    expect(garbledFirst.length).toBeGreaterThan(0);
    // Each garbled first answer was followed by a repair from the same model that quotes it.
    for (const bad of garbledFirst) {
      const repair = requests.find(
        (r) => r.index > bad.index && r.body.model === bad.body.model && isRepair(r.prompt) && r.prompt.startsWith(bad.prompt),
      );
      expect(repair, `no repair after request ${bad.index}`).toBeDefined();
    }
    const calls = sessionCalls(dir);
    const invalidFirst = calls.filter((c) => !c.tag.startsWith('repair-') && c.valid === false);
    expect(invalidFirst).toHaveLength(garbledFirst.length);
    const summary = readJson(path.join(dir, 'summary.json'));
    expect(summary.answers.repairs).toBe(garbledFirst.length);
    // Degraded: both tries were garbage; the reason is in the artifact. Repaired: the second answer was used.
    const degraded: string[] = summary.answers.degraded_artifacts;
    expect(degraded.length).toBeGreaterThan(0);
    for (const file of degraded.filter((f) => f.endsWith('verdict.json')))
      expect(readJson(path.join(dir, file)).degraded_reason).toMatch(/^malformed output after one repair retry: /);
    const repairedOk = calls.filter((c) => c.tag.startsWith('repair-') && c.valid === true);
    expect(repairedOk.length).toBeGreaterThan(0);
    expect(requests.some((r) => isRepair(r.prompt) && r.prompt.includes('Schema errors (ajv, JSON pointer and message):'))).toBe(true);
  });

  it('refine -v - a server that refuses the schema: the call is made once more without it and recorded schema: refused; the log says which backends ran with and without a schema', async () => {
    const follow = schemaFollowingResponder();
    const refusing: Responder = (r) =>
      r.body.model === 'model-b' && r.schema
        ? { kind: 'status', status: 400, body: '{"error":{"message":"json_schema response_format is not supported"}}' }
        : follow(r);
    const p = await setup(refusing);
    const run = await refine(p, 'refused', JUDGES, ['-v']);
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(
      /judge-b evaluate\.r1: answer schema refused by the server; asked again with the schema in the prompt; answer valid/,
    );
    expect(run.stdout).toMatch(/judge-a evaluate\.r1: answer schema sent as response_format \(json_schema\); answer valid/);
    expect(run.stdout).toMatch(/answers from judge-b: \d+ calls, answer schema refused \d+; \d+\/\d+ first tries usable/);
    const dir = p.path('.refinery/sessions/refused');
    const calls = sessionCalls(dir);
    expect(new Set(calls.filter((c) => c.backend === 'judge-b').map((c) => c.schema))).toEqual(new Set(['refused']));
    const summary = readJson(path.join(dir, 'summary.json'));
    expect(summary.answers.degraded_artifacts).toEqual([]);
    expect(readFileSync(path.join(dir, 'SUMMARY.md'), 'utf8')).toMatch(/\| judge-b \| \d+ \| refused \d+ \| \d+\/\d+ \|/);
  });
});
