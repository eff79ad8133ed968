// `refinery logs bundle`: every kind of secret planted in a run (in the question, an answer, a
// vote's reason and the config) is gone from the HTML, and the bundle lists what it removed by
// kind; --no-redact keeps them (so the run really carried them into the bundle).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { fleetScripts } from '../../../dev/massgen-gen/fleet.ts';
import type { BundleData } from '../../../src/workflows/massgen/bundle-data.ts';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const LOGS = '.massgen/massgen_logs';
const SK = 'sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3';
const BEARER_TOKEN = 'eyJhbGciOiJIUzI1NiJ9.abcDEF1234567';
const GOOGLE = 'AIzaSyA1234567890abcdefghijklmnopqrs';
const GITHUB = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
const SLACK = 'xoxb-1234567890-abcdefghijkl';
const EMAIL = 'alice.dev@example.com';
const HOME = '/home/alice/projects/secret-plans';
const ENV_SECRET = 'q9W8e7R6t5Y4u3I2o1P0-env';
const CONFIG_SECRET = 'cfgSecret771';
const TICKET = 'ACME-4711-TICKET';
const CI_FOLDER = '/srv/ci/builds/77/.massgen/massgen_logs';

/** Every planted value, with the kind the bundle must count it under. */
function planted(session: string): [string, string][] {
  return [
    [SK, 'sk_key'],
    [BEARER_TOKEN, 'bearer_token'],
    [GOOGLE, 'google_api_key'],
    [GITHUB, 'github_token'],
    [SLACK, 'slack_token'],
    [EMAIL, 'email'],
    ['/home/alice', 'home_path'],
    [ENV_SECRET, 'secret_value'],
    [CONFIG_SECRET, 'secret_value'],
    [TICKET, 'pattern'],
    [`${CI_FOLDER}/${session}`, 'run_path'],
    ['/home/user/project', 'run_path'],
  ];
}

function setUp(): string {
  project = tempProject();
  const [script] = fleetScripts(1);
  const question = `Deploy with ${SK}, header Bearer ${BEARER_TOKEN}, maps key ${GOOGLE}. Mail ${EMAIL}.`;
  const scripts = [{ ...script!, turns: [{ ...script!.turns[0]!, question }] }];
  const [session] = generateLogs({ outDir: project.path(LOGS), seed: 2, scripts }).logDirs as [string];
  const attempt = project.path(path.join(LOGS, session, 'turn_1/attempt_1'));
  // An answer that mentions more secrets and paths.
  const agentDir = path.join(attempt, 'agent_a');
  const snapshot = readdirSync(agentDir)
    .sort()
    .find((d) => readdirSync(path.join(agentDir, d)).includes('answer.txt')) as string;
  const answer = path.join(agentDir, snapshot, 'answer.txt');
  writeFileSync(
    answer,
    `${readFileSync(answer, 'utf8')}\nPushed with ${GITHUB}; told ${SLACK}. Notes in ${HOME}/todo.md and /home/user/project/notes.md, ` +
      `logs at ${CI_FOLDER}/${session}/turn_1/attempt_1/agent_a. Env key ${ENV_SECRET}, config key ${CONFIG_SECRET}, ticket ${TICKET}.\n`,
  );
  // A vote's reason, as coordination_events.json carries it.
  const events = path.join(attempt, 'coordination_events.json');
  const text = readFileSync(events, 'utf8');
  const reason = /"reason": "([^"]+)"/.exec(text)?.[1] as string;
  writeFileSync(events, text.replace(`"reason": "${reason}"`, `"reason": "${reason} Ask ${EMAIL} or use ${GITHUB}."`));
  // The MassGen config with a key in it (refinery never asks for one, but a config may hold it).
  const metadata = path.join(attempt, 'execution_metadata.yaml');
  writeFileSync(metadata, readFileSync(metadata, 'utf8').replace(/^( +)type: (\S+)$/m, `$1type: $2\n$1api_key: ${CONFIG_SECRET}`));
  return session;
}

function bundleData(html: string): BundleData {
  const json = /<script type="application\/json" id="bundle-data">([^<]*)<\/script>/.exec(html)?.[1] as string;
  return JSON.parse(json) as BundleData;
}

describe('refinery logs bundle redaction', () => {
  it('bundle - every kind of secret planted in a run is gone from the file, and the bundle counts what it removed by kind', async () => {
    const session = setUp();
    const p = project as TempProject;
    const env = { MASSGEN_BUNDLE_TEST_API_KEY: ENV_SECRET };
    const result = await runCli(['logs', 'bundle', session, '--redact', 'ACME-\\d+-TICKET', '--out', 'share/run.html'], {
      cwd: p.root,
      env,
    });
    expect(result.code, result.stderr).toBe(0);
    const html = readFileSync(p.path('share/run.html'), 'utf8');
    const data = bundleData(html);
    for (const [value, kind] of planted(session)) {
      expect(html.includes(value), `${kind} value ${value} survived`).toBe(false);
      expect(data.redaction.counts[kind as keyof typeof data.redaction.counts], kind).toBeGreaterThan(0);
    }
    expect(html).not.toContain(`Bearer ${BEARER_TOKEN.slice(0, 12)}`);
    expect(data.redaction.enabled).toBe(true);
    expect(data.redaction.total).toBe(Object.values(data.redaction.counts).reduce((a, b) => a + (b ?? 0), 0));
    for (const kind of [
      'sk_key',
      'bearer_token',
      'google_api_key',
      'github_token',
      'slack_token',
      'email',
      'home_path',
      'secret_value',
      'pattern',
      'run_path',
    ]) {
      expect(result.stdout).toMatch(new RegExp(`${kind} \\d+`));
    }
    // Paths through the run stay readable, relative to the logs folder.
    expect(data.answers.map((a) => a.text).join('\n')).toContain(`logs at ${session}/turn_1/attempt_1/agent_a`);
    expect(data.config.text).toContain('[redacted:secret_value]');
  }, 60_000);

  it('bundle - --no-redact keeps e-mails, paths and the config secrets (keys were redacted as the logs were read) and says so; --redact with a bad pattern is exit 2', async () => {
    const session = setUp();
    const p = project as TempProject;
    const result = await runCli(['logs', 'bundle', session, '--no-redact', '--out', 'raw.html'], {
      cwd: p.root,
      env: { MASSGEN_BUNDLE_TEST_API_KEY: ENV_SECRET },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('NOT redacted (--no-redact)');
    const html = readFileSync(p.path('raw.html'), 'utf8');
    // Credentials (shapes and the environment's key values) never get past reading the logs.
    const credentials = new Set(['sk_key', 'bearer_token', 'google_api_key', 'github_token', 'slack_token', 'secret_value']);
    for (const [value, kind] of planted(session)) {
      const kept = !credentials.has(kind) || value === CONFIG_SECRET;
      expect(html.includes(value), value).toBe(kept);
    }
    expect(bundleData(html).redaction).toEqual({ enabled: false, counts: {}, total: 0 });
    const bad = await runCli(['logs', 'bundle', session, '--redact', '(unclosed'], { cwd: p.root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--redact '(unclosed' is not a valid regular expression");
    const both = await runCli(['logs', 'bundle', session, '--redact', 'x+', '--no-redact'], { cwd: p.root });
    expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('--no-redact and --redact exclude each other') });
    const unknown = await runCli(['logs', 'bundle', 'log_19990101_000000'], { cwd: p.root });
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining("no run 'log_19990101_000000' in") });
  }, 60_000);

  it('bundle - RUN may be the # that refinery logs list shows: 1 is the newest run', async () => {
    project = tempProject();
    const sessions = generateLogs({ outDir: project.path(LOGS), seed: 3, scripts: fleetScripts(3) }).logDirs.sort();
    const list = await runCli(['logs', 'list', '--json'], { cwd: project.root });
    const listed = (JSON.parse(list.stdout) as Array<{ dir: string }>).map((r) => path.basename(r.dir));
    expect(listed).toEqual([...sessions].reverse());
    for (const [n, session] of listed.entries()) {
      const result = await runCli(['logs', 'bundle', String(n + 1), '--out', `b${n + 1}.html`], { cwd: project.root });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`: ${session} turn `);
    }
    const beyond = await runCli(['logs', 'bundle', '4'], { cwd: project.root });
    expect(beyond).toMatchObject({ code: 2, stderr: expect.stringContaining("no run '4' in") });
    expect(beyond.stderr).toContain('a log_* name or a # from `refinery logs list`');
  }, 60_000);
});
