// Issue #10, item 5: a backend whose error body echoes the request headers must not put the API key
// into anything refinery writes or prints. The refine pipeline runs through the real CLI against a
// fake OpenAI-compatible server that answers every call with 500 and the request's headers.
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

// No well-known key shape (no sk-, no Bearer alone would give it away): only the configured
// api_key_env value can find it.
const KEY = 'plain7Secret0Value9NoShape4u';
const SHAPED_KEY = 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12';

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (e.name === 'node_modules' ? [] : listFiles(path.join(dir, e.name))) : [path.join(dir, e.name)],
  );
}

function filesContaining(root: string, needle: string): string[] {
  return listFiles(root)
    .filter((f) => readFileSync(f).includes(needle))
    .map((f) => path.relative(root, f));
}

describe('secret redaction through the refine pipeline', () => {
  let server: FakeOpenAiServer;
  let project: TempProject;
  beforeAll(async () => {
    server = await startFakeOpenAiServer((req) => ({
      kind: 'status',
      status: 500,
      body: JSON.stringify({ error: { message: 'upstream exploded', echo: { headers: req.headers, shaped: SHAPED_KEY } } }),
    }));
    const retry = '{ max: 1, base_ms: 1, max_ms: 5 }';
    const judges = ['a', 'b'].map(
      (j) => `  judge-${j}: { kind: openai, base_url: "${server.url}", model: model-${j}, api_key_env: REFINE_TEST_KEY, retry: ${retry} }`,
    );
    project = tempProject({
      'refinery.config.yaml': `backends:\n  writer: { kind: openai, base_url: "${server.url}", model: model-w, api_key_env: REFINE_TEST_KEY, retry: ${retry} }\n${judges.join('\n')}\n`,
      'deliverable/README.md': '# Tool\n\nRun `tool --help`.\n',
      'previous/README.md': '# Tool\n',
    });
    cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
  });
  afterAll(async () => {
    await server.close();
    project.cleanup();
  });

  it('refine - a 500 body echoing the Authorization header: the key is in no file, event or console line', async () => {
    const params = {
      session: 'leak',
      query: 'Write a README for the tool',
      deliverable: 'deliverable/README.md',
      previous: 'previous/README.md',
      writer: 'writer',
      judges: 'judge-a,judge-b',
      guard: 'judge-a',
    };
    const args = ['run', 'refine', '-v', ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`])];
    const run = await runCli(args, { cwd: project.root, env: { REFINE_TEST_KEY: KEY } });
    const json = await runCli([...args, '--json', '--force'], { cwd: project.root, env: { REFINE_TEST_KEY: KEY } });

    // The server did see the key, and echoed it: the leak path is real.
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    // The error text still reaches the artifacts, redacted.
    const verdict = readFileSync(project.path('.refinery/sessions/leak/round_001/judges/judge-a/verdict.json'), 'utf8');
    expect(verdict).toMatch(/HTTP 500: .*upstream exploded/);
    expect(verdict).toContain('[redacted:');

    for (const out of [run, json]) {
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout + out.stderr).toContain('HTTP 500');
      expect(out.stdout).not.toContain(KEY);
      expect(out.stderr).not.toContain(KEY);
      expect(out.stdout).not.toContain(SHAPED_KEY);
      expect(out.stderr).not.toContain(SHAPED_KEY);
    }
    const written = listFiles(project.root).map((f) => path.relative(project.root, f));
    for (const must of [
      'criteria.json',
      'regression.json',
      'summary.json',
      'SUMMARY.md',
      'round_001/consensus.json',
      'round_001/critique_packet.md',
    ])
      expect(written).toContain(`.refinery/sessions/leak/${must}`);
    expect(written.some((f) => /^\.refinery\/runs\/.+\/events\.jsonl$/.test(f))).toBe(true);
    expect(filesContaining(project.root, KEY)).toEqual([]);
    expect(filesContaining(project.root, SHAPED_KEY)).toEqual([]);
  });
});
