// Refine in a user's project: what is missing or misconfigured is said before any model is paid.
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

describe('refine preflight', () => {
  let server: FakeOpenAiServer;
  let project: TempProject;
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
    server.setResponder(() => ({ kind: 'content', content: '{}' }));
    project = tempProject({
      'refinery.config.yaml': [
        'backends:',
        `  paid: { kind: openai, base_url: "${server.url}", model: m, api_key_env: REFINERY_TEST_KEY_THAT_IS_UNSET }`,
        `  free: { kind: openai, base_url: "${server.url}", model: m }`,
        '  agent: { kind: command, command: [no-such-agent-cli-here, -p] }',
        '  recorded: { kind: replay, dir: examples/refine/recordings/judge-a }',
        '  recorded-writer: { kind: replay, dir: examples/refine/recordings/writer }',
        '',
      ].join('\n'),
      'deliverable/poem.md': 'Roses are red.\n',
      'task.md': 'Write a poem about the sea.\n',
    });
    cpSync(path.join(REPO_ROOT, 'examples/refine/recordings'), project.path('examples/refine/recordings'), { recursive: true });
  });
  afterAll(async () => {
    await server.close();
    project.cleanup();
  });

  it('refine - with no deliverable and no judges, one message names both and nothing runs', async () => {
    const run = await runCli(['run', 'refine'], { cwd: project.root });
    expect(run.code).toBe(2);
    const errors = run.stderr.split('\n').filter((l) => l.startsWith('error:'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('deliverable');
    expect(errors[0]).toContain('judges');
    expect(existsSync(project.path('.refinery/sessions'))).toBe(false);
  });

  it('refine - an unknown backend, an unset key variable and a missing program are all reported before any call (exit 2)', async () => {
    const params = [
      'deliverable=deliverable/poem.md',
      'task_file=task.md',
      'judges=free,nosuch,paid,agent',
      'previous=deliverable/poem.md',
    ];
    const run = await runCli(['run', 'refine', ...params.flatMap((p) => ['--param', p])], { cwd: project.root });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("no backend named 'nosuch' in refinery.config.yaml");
    expect(run.stderr).toContain('$REFINERY_TEST_KEY_THAT_IS_UNSET, which is not set');
    expect(run.stderr).toContain("'no-such-agent-cli-here', which is not found on PATH");
    expect(run.stderr).toContain('3 errors found; nothing was run.');
    expect(server.requests).toHaveLength(0);
    expect(existsSync(project.path('.refinery/sessions/example/criteria.json'))).toBe(false);
  });

  it('refine - a replay backend asked about another deliverable says its recording was made for another prompt', async () => {
    const params = ['deliverable=deliverable/poem.md', 'task_file=task.md', 'judges=recorded', 'writer=recorded-writer', 'session=replay'];
    const run = await runCli(['run', 'refine', '--json', ...params.flatMap((p) => ['--param', p])], { cwd: project.root });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("was made for another prompt (it expects 'slugify' in it)");
    expect(run.stdout).not.toContain('--separator');
  });
});
