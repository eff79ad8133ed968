import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { type FakeOpenAiServer, type RecordedRequest, startFakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { events, runCli, stageEnds, type TempProject, tempProject } from '../../helpers/project.ts';
import { FIXTURES } from './fixture-truth.ts';

const KEY = 'sk-selfpipe-0123456789abcdefSECRET';
const SESSION = 'log_20261130_064801_485886';
const OUT = `.refinery/self-analysis/${SESSION}/turn_1`;

let server: FakeOpenAiServer | undefined;
let project: TempProject | undefined;
afterEach(async () => {
  await server?.close();
  project?.cleanup();
  server = undefined;
  project = undefined;
});

function setUp(url: string): TempProject {
  const p = tempProject({
    'refinery.config.yaml': `backends:
  good: { kind: openai, base_url: "${url}", model: fake-analyst, api_key_env: SELF_TEST_API_KEY, retry: { max: 0 } }
  down: { kind: openai, base_url: "http://127.0.0.1:9/v1", model: gone, retry: { max: 0 }, timeout_s: 5 }
self_analysis: { backends: [good] }
`,
  });
  cpSync(path.join(FIXTURES, 'massgen-v0191', 'consensus-3'), p.path('.massgen/massgen_logs'), { recursive: true });
  return p;
}

/** An analyst that cites a real fact with its value and a real vote file of the turn, as its prompt shows them. */
function citingAnalyst(request: RecordedRequest) {
  const perspective = /You are the (\w+) analyst/.exec(request.prompt)?.[1] ?? 'unknown';
  const factsLine = request.prompt.split('\n').find((l) => l.startsWith('{"schemaVersion"')) ?? '{}';
  const facts = JSON.parse(factsLine) as { overview: { agents: number } };
  const vote = /### Vote: (\S+)/.exec(request.prompt)?.[1] ?? 'missing';
  const evidence = [
    { fact: '/overview/agents', value: String(facts.overview.agents) },
    { file: vote, lines: [1, 1] },
  ];
  return {
    kind: 'content' as const,
    content: JSON.stringify({ findings: [{ severity: 'low', claim: `${perspective} finding`, evidence }] }),
  };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.name === 'node_modules') return [];
    return e.isDirectory() ? filesUnder(full) : e.isFile() ? [full] : [];
  });
}

const env = { SELF_TEST_API_KEY: KEY };

describe('self-analysis pipeline', () => {
  it('self-analysis pipeline - a logs folder: per turn a schema-checked self-analysis.json, its analysis.json and the combined report; an unchanged rerun makes 0 calls; the key is in no file', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url);
    const first = await runCli(['run', 'self-analysis', '--json'], { cwd: project.root, env });
    expect(first.code, first.stderr).toBe(0);
    expect(stageEnds(first.stdout)).toEqual({ [`turn[${SESSION}/turn_1]`]: 'succeeded' });
    expect(server.requests).toHaveLength(3);
    const registry = new SchemaRegistry(project.root);
    const self = JSON.parse(readFileSync(project.path(`${OUT}/self-analysis.json`), 'utf8'));
    expect(registry.validate('self-analysis', self)).toEqual({ ok: true });
    expect(registry.validate('turn-analysis', JSON.parse(readFileSync(project.path(`${OUT}/analysis.json`), 'utf8')))).toEqual({
      ok: true,
    });
    expect(self.partial).toBe(false);
    expect(self.analysts.map((a: { perspective: string; findings: unknown[] }) => [a.perspective, a.findings.length])).toEqual([
      ['correctness', 1],
      ['efficiency', 1],
      ['behavior', 1],
    ]);
    const report = readFileSync(project.path(`${OUT}/ANALYSIS_REPORT.md`), 'utf8');
    expect(report.indexOf("## Analysts' findings")).toBeGreaterThan(report.indexOf('## 8. Recommendations'));
    // Evidence links lead, from where the report lies, to the turn's own files.
    const links = [...report.matchAll(/\]\(([^)#]+\/vote\.json)#L1-L1\)/g)].map((m) => decodeURIComponent(m[1] as string));
    expect(links).toHaveLength(3);
    for (const link of links) expect(existsSync(path.resolve(project.path(OUT), link)), link).toBe(true);
    // The turn folder is left to the analyze pipeline (which reads every file of it).
    expect(existsSync(project.path(`.massgen/massgen_logs/${SESSION}/turn_1/self-analysis.json`))).toBe(false);

    const again = await runCli(['run', 'self-analysis', '--json'], { cwd: project.root, env });
    expect(again.code, again.stderr).toBe(0);
    expect(events(again.stdout).filter((e) => e.type === 'stage-start')).toEqual([]);
    expect(server.requests).toHaveLength(3);
    // Nothing changed by the stats the last run recorded: answered from them, with no preflight, so no key is needed.
    const keyless = await runCli(['run', 'self-analysis'], { cwd: project.root, env: { SELF_TEST_API_KEY: '' } });
    expect(keyless.code, keyless.stderr).toBe(0);
    // A forced rerun asks the analysts again, through the response cache: still no call.
    const forced = await runCli(['run', 'self-analysis', '--force', '--json'], { cwd: project.root, env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(stageEnds(forced.stdout)).toEqual({ [`turn[${SESSION}/turn_1]`]: 'succeeded' });
    expect(server.requests).toHaveLength(3);
    for (const file of filesUnder(project.root)) expect(readFileSync(file, 'latin1').includes(KEY), file).toBe(false);
  });

  it('self-analysis pipeline - a missing key or an unknown backend exits 2 before any call and writes nothing', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url);
    const noKey = await runCli(['run', 'self-analysis'], { cwd: project.root, env: { SELF_TEST_API_KEY: '' } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('$SELF_TEST_API_KEY, which is not set');
    const unknown = await runCli(['run', 'self-analysis', '--param', 'backends=goood'], { cwd: project.root, env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("cannot call the analysts' backends (from --param backends)");
    expect(unknown.stderr).toContain("no backend named 'goood'");
    // A logs folder that is not there is said of logs alone: another `runs` glob would not fix it.
    const noLogs = await runCli(['run', 'self-analysis', '--param', 'logs=nope'], { cwd: project.root, env });
    expect(noLogs.code).toBe(2);
    expect(noLogs.stderr).toContain(`error: --param logs=nope: no such folder (${project.path('nope')})\n`);
    expect(noLogs.stderr).not.toContain('runs');
    expect(server.requests).toHaveLength(0);
    expect(existsSync(project.path('.refinery/self-analysis'))).toBe(false);
  });

  it('self-analysis pipeline - a backend that is down: the report is written partial, and the next run asks only the failed analyst again', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url);
    const args = ['run', 'self-analysis', '--param', 'backends=good,good,down', '--json'];
    const first = await runCli(args, { cwd: project.root, env });
    expect(first.code, first.stderr).toBe(0);
    expect(events(first.stdout).some((e) => JSON.stringify(e).includes('the behavior analyst (down) failed'))).toBe(true);
    const self = JSON.parse(readFileSync(project.path(`${OUT}/self-analysis.json`), 'utf8'));
    expect(self.analysts.map((a: { status: string }) => a.status)).toEqual(['ok', 'ok', 'failed']);
    expect(readFileSync(project.path(`${OUT}/ANALYSIS_REPORT.md`), 'utf8')).toContain('**Partial:**');
    expect(server.requests).toHaveLength(2);
    const again = await runCli(args, { cwd: project.root, env });
    expect(again.code, again.stderr).toBe(0);
    expect(stageEnds(again.stdout)).toEqual({ [`turn[${SESSION}/turn_1]`]: 'succeeded' });
    expect(server.requests).toHaveLength(2);
  });
});
