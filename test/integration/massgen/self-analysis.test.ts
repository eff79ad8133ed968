import { cpSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FINDINGS_SCHEMA } from '../../../src/workflows/massgen/self-analysis/findings-schema.ts';
import { type FakeOpenAiServer, type RecordedRequest, startFakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { runCli, type TempProject, tempProject } from '../../helpers/project.ts';
import { schemaFollowingResponder } from '../../helpers/schema-responders.ts';
import { FIXTURES } from './fixture-truth.ts';

const KEY = 'sk-selftest-0123456789abcdefSECRET';
const SESSION = 'log_20261130_064801_485886';
const TURN = `.massgen/massgen_logs/${SESSION}/turn_1`;

let server: FakeOpenAiServer | undefined;
let project: TempProject | undefined;
afterEach(async () => {
  await server?.close();
  project?.cleanup();
  server = undefined;
  project = undefined;
});

function config(url: string, extra = ''): string {
  return `backends:
  good: { kind: openai, base_url: "${url}", model: fake-analyst, api_key_env: SELF_TEST_API_KEY, retry: { max: 0 } }
  down: { kind: openai, base_url: "http://127.0.0.1:9/v1", model: gone, retry: { max: 0 }, timeout_s: 5 }
${extra}`;
}

function setUp(url: string, extra = ''): TempProject {
  const p = tempProject({ 'refinery.config.yaml': config(url, extra) });
  cpSync(path.join(FIXTURES, 'massgen-v0191', 'consensus-3'), p.path('.massgen/massgen_logs'), { recursive: true });
  return p;
}

/** An analyst that reads its prompt as a model would: cites real facts with their values and a real vote file. */
function citingAnalyst(request: RecordedRequest) {
  const perspective = /You are the (\w+) analyst/.exec(request.prompt)?.[1] ?? 'unknown';
  const factsLine = request.prompt.split('\n').find((l) => l.startsWith('{"schemaVersion"')) ?? '{}';
  const facts = JSON.parse(factsLine) as { overview: { votes: number; agents: number } };
  const vote = /### Vote: (\S+)/.exec(request.prompt)?.[1] ?? 'missing';
  const findings = [
    {
      severity: 'medium',
      claim: `${perspective}: all ${facts.overview.agents} agents took part | *not* markdown`,
      evidence: [
        { fact: '/overview/agents', value: String(facts.overview.agents) },
        { file: vote, lines: [1, 1] },
      ],
    },
  ];
  if (perspective === 'efficiency')
    findings.push({
      severity: 'high',
      claim: 'far too many votes',
      evidence: [{ fact: '/overview/votes', value: String(facts.overview.votes + 40) }],
    });
  return { kind: 'content' as const, content: JSON.stringify({ findings }) };
}

const env = { SELF_TEST_API_KEY: KEY };
const selfArgs = ['logs', 'analyze', '--mode', 'self', SESSION];

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.name === 'node_modules') return [];
    return e.isDirectory() ? filesUnder(full) : e.isFile() ? [full] : [];
  });
}

describe('refinery logs analyze --mode self', () => {
  it('self-analysis - three analysts with valid evidence: findings shown, a contradicted fact unverified, key written nowhere', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url);
    const result = await runCli([...selfArgs, '--backends', 'good'], { cwd: project.root, env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(server.requests).toHaveLength(3);
    // The schema is sent per call, natively and strict, exactly as refine sends its schemas.
    for (const r of server.requests) {
      expect(r.schema).toEqual(FINDINGS_SCHEMA.schema);
      expect(r.strict).toBe(true);
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    }
    const json = JSON.parse(readFileSync(project.path(`${TURN}/self-analysis.json`), 'utf8'));
    expect(json.partial).toBe(false);
    expect(json.analysts.map((a: { perspective: string; findings: unknown[] }) => [a.perspective, a.findings.length])).toEqual([
      ['correctness', 1],
      ['efficiency', 1],
      ['behavior', 1],
    ]);
    const efficiency = json.analysts[1];
    expect(efficiency.unverified).toHaveLength(1);
    expect(efficiency.unverified[0].reasons[0]).toMatch(/^claims \/overview\/votes is \d+, but analysis.json has \d+$/);
    const report = readFileSync(project.path(`${TURN}/ANALYSIS_REPORT.md`), 'utf8');
    expect(report.indexOf('## 8. Recommendations')).toBeGreaterThan(0);
    expect(report.indexOf("## Analysts' findings")).toBeGreaterThan(report.indexOf('## 8. Recommendations'));
    expect(report).toContain('#### Unverified');
    expect(report).toMatch(/\[`\/overview\/agents`\]\(analysis\.json\) = `3`/);
    expect(report).toMatch(/\(attempt_1\/agent_\w+\/[\d_]+\/vote\.json#L1-L1\)/);
    expect(report).toContain('\\| \\*not\\* markdown');
    for (const file of filesUnder(project.root)) expect(readFileSync(file, 'latin1').includes(KEY), file).toBe(false);
  });

  it('self-analysis - an analyst citing evidence that does not exist: Unverified with the reason, no finding shown', async () => {
    server = await startFakeOpenAiServer(schemaFollowingResponder());
    project = setUp(server.url);
    const result = await runCli([...selfArgs, '--backends', 'good'], { cwd: project.root, env });
    expect(result.code).toBe(0);
    const json = JSON.parse(readFileSync(project.path(`${TURN}/self-analysis.json`), 'utf8'));
    for (const a of json.analysts) {
      expect(a.findings).toEqual([]);
      expect(a.unverified.length).toBeGreaterThan(0);
      expect(a.unverified[0].reasons.join(' ')).toMatch(/is not a JSON pointer|is not a file of this turn/);
    }
    expect(readFileSync(project.path(`${TURN}/ANALYSIS_REPORT.md`), 'utf8')).toContain('No verified findings.');
  });

  it('self-analysis - a backend that is down: its section failed, report written, exit 1', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url);
    const result = await runCli([...selfArgs, '--backends', 'good,good,down'], { cwd: project.root, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('partial self-analysis');
    const json = JSON.parse(readFileSync(project.path(`${TURN}/self-analysis.json`), 'utf8'));
    expect(json.partial).toBe(true);
    expect(json.analysts.map((a: { status: string }) => a.status)).toEqual(['ok', 'ok', 'failed']);
    expect(json.analysts[2].reason).toMatch(/backend error/);
    const report = readFileSync(project.path(`${TURN}/ANALYSIS_REPORT.md`), 'utf8');
    expect(report).toMatch(/### Behavior \(`down`, `gone`\)\n\n\*\*Failed:\*\* backend error/);
  });

  it('self-analysis - kept without --force; an unchanged rerun with --force makes 0 calls (response cache)', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url, 'self_analysis: { backends: [good] }\n');
    expect((await runCli(selfArgs, { cwd: project.root, env })).code).toBe(0);
    expect(server.requests).toHaveLength(3);
    const first = readFileSync(project.path(`${TURN}/self-analysis.json`), 'utf8');
    const kept = await runCli(selfArgs, { cwd: project.root, env });
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('kept the existing self-analysis');
    const again = await runCli([...selfArgs, '--force'], { cwd: project.root, env });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 model call(s), 3 from the response cache, $0.0000');
    expect(server.requests).toHaveLength(3);
    expect(readFileSync(project.path(`${TURN}/self-analysis.json`), 'utf8')).toBe(first);
  });

  it('self-analysis - an unknown backend or a missing key exits 2 before any call and writes nothing', async () => {
    server = await startFakeOpenAiServer(citingAnalyst);
    project = setUp(server.url);
    const unknown = await runCli([...selfArgs, '--backends', 'goood'], { cwd: project.root, env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no backend named 'goood'");
    expect(unknown.stderr).toContain("did you mean 'good'");
    const noKey = await runCli([...selfArgs, '--backends', 'good'], { cwd: project.root, env: { SELF_TEST_API_KEY: '' } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('$SELF_TEST_API_KEY, which is not set');
    project.write('massgen.yaml', 'agents:\n  - id: a\n    backend: { type: openai, model: gpt-5 }\n');
    const massgen = await runCli([...selfArgs, '--config', 'massgen.yaml'], { cwd: project.root, env });
    expect(massgen.code).toBe(2);
    expect(massgen.stderr).toContain('is a MassGen config');
    expect(server.requests).toHaveLength(0);
    expect(() => statSync(project?.path(`${TURN}/self-analysis.json`) ?? '')).toThrow();
  });
});
