// Issue #32, item 2: an `sk-…` key in a vote's reason (coordination_events.json) or in the question
// (status.json) is redacted as the logs are read: no file refinery writes from them (analysis.json,
// ANALYSIS_REPORT.md, runs-summary.json, the digest cache) holds it, through the real CLI.
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { fleetScripts } from '../../../dev/massgen-gen/fleet.ts';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const LOGS = '.massgen/massgen_logs';
const OPENAI = 'sk-proj-Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6';
const ANTHROPIC = 'sk-ant-api03-Z9x8C7v6B5n4M3l2K1j0H9g8F7d6S5a4-QQ';

function filesHolding(dir: string, needle: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => readFileSync(f).includes(needle))
    .sort();
}

it('analyze - sk- keys in a vote reason and in the question reach no analysis, report, runs summary or digest cache', async () => {
  project = tempProject();
  cpSync(path.join(REPO_ROOT, 'pipelines/analyze.yaml'), project.path('pipelines/analyze.yaml'));
  const [script] = fleetScripts(1);
  const question = `Deploy it; the key is ${ANTHROPIC} for now.`;
  const [session] = generateLogs({
    outDir: project.path(LOGS),
    seed: 5,
    scripts: [{ ...script!, turns: [{ ...script!.turns[0]!, question }] }],
  }).logDirs as [string];
  const events = project.path(path.join(LOGS, session, 'turn_1/attempt_1/coordination_events.json'));
  const text = readFileSync(events, 'utf8');
  const reason = /"reason": "([^"]+)"/.exec(text)?.[1] as string;
  writeFileSync(events, text.replace(`"reason": "${reason}"`, `"reason": "${reason} I used ${OPENAI} to check."`));
  const status = project.path(path.join(LOGS, session, 'turn_1/attempt_1/status.json'));
  expect(readFileSync(status, 'utf8')).toContain(ANTHROPIC);
  // What MassGen wrote: these files hold the keys before refinery reads anything.
  const before = new Map([OPENAI, ANTHROPIC].map((k) => [k, filesHolding(project!.root, k)]));

  const run = await runCli(['run', 'analyze', '--json'], { cwd: project.root });
  expect(run.code, run.stderr).toBe(0);
  const summary = await runCli(['logs', 'summary', '--json'], { cwd: project.root });
  expect(summary.code, summary.stderr).toBe(0);

  const written = ['analysis.json', 'ANALYSIS_REPORT.md', 'runs-summary.json', 'digests.json'];
  const all = readdirSync(project.root, { recursive: true }) as string[];
  for (const name of written)
    expect(
      all.some((f) => f.endsWith(name)),
      name,
    ).toBe(true);
  expect(all.some((f) => f.endsWith(path.join('.refinery', 'cache', 'massgen-summary', 'digests.json')))).toBe(true);
  for (const key of [OPENAI, ANTHROPIC]) {
    expect(filesHolding(project.root, key), key).toEqual(before.get(key));
    expect(run.stdout + summary.stdout, key).not.toContain(key);
  }
  // The vote's reason and the question are still there, the key replaced.
  const analysisFile = all.find((f) => f.endsWith('analysis.json')) as string;
  const analysis = readFileSync(project.path(analysisFile), 'utf8');
  expect(analysis).toContain('I used [redacted:sk_key] to check.');
  expect(analysis).toContain('the key is [redacted:sk_key] for now.');
  const report = readFileSync(project.path(all.find((f) => f.endsWith('ANALYSIS_REPORT.md')) as string), 'utf8');
  // Markdown-escaped in the report: \[redacted:sk\_key\].
  expect(report).toMatch(/Question:\*\* .*redacted:sk\\?_key/);
}, 120_000);
