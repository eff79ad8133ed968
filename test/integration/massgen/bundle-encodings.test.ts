// Issue #32, item 3: `refinery logs bundle` through the real CLI, with an answer that carries the
// shapes the outside probe got through (AWS key id and secret, a JWT, a PEM key, URL-encoded sk-
// and ghp_ keys, base64 of lines, a ghp_ token cut across lines, a *_PRIVATE_KEY variable's value):
// none of them is in the HTML in any form a reader could decode.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { fleetScripts } from '../../../dev/massgen-gen/fleet.ts';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

let project: TempProject | undefined;
afterEach(() => project?.cleanup());

const LOGS = '.massgen/massgen_logs';
const AWS_ID = 'AKIAQ7X2M4N6P8R0T2V4';
const AWS_SECRET = 'kT9vQ2wE5rY8uI1oP4aS7dF0gH3jK6lZ9xC2vB5n';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJkZXBsb3kiLCJpYXQiOjE3MDAwMDAwMDB9.Qm9ndXNTaWduYXR1cmVWYWx1ZTEyMzQ1Njc4OTA';
const PEM_BODY = 'MC4CAQAwBQYDK2VwBCIEIHq8x3Lr1Vd9nT0cW5eK2yP7mJ4sA6fB1uG8hN3oZ2Qi';
const SK = 'sk-proj-Lm3Nb5Vc7Xz9As1Dq2We4Rt6Yu8Io0Pa';
const GHP = 'ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s0';
const PRIVATE_VALUE = 'deploy-Value-93xQ';

/** Every way a reader could get `core` back from the page. */
function reveals(text: string, core: string): boolean {
  const views = [
    text,
    text.replace(/\\n/g, '\n').replace(/\r?\n[ \t]*/g, ''),
    text.replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
    text.replace(/%([0-9A-Fa-f]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
    ...[...text.matchAll(/[A-Za-z0-9+/_-]{8,}={0,2}/g)].map((m) => Buffer.from(m[0], 'base64').toString('latin1')),
  ];
  return views.some((v) => v.includes(core));
}

it('bundle - AWS, JWT, PEM, URL-encoded and base64 keys, a wrapped ghp_ token and a *_PRIVATE_KEY value are gone in every form', async () => {
  project = tempProject();
  const [session] = generateLogs({ outDir: project.path(LOGS), seed: 4, scripts: fleetScripts(1) }).logDirs as [string];
  const agentDir = project.path(path.join(LOGS, session, 'turn_1/attempt_1/agent_a'));
  const snapshot = readdirSync(agentDir)
    .sort()
    .find((d) => readdirSync(path.join(agentDir, d)).includes('answer.txt')) as string;
  const answer = path.join(agentDir, snapshot, 'answer.txt');
  const b64 = (line: string): string => Buffer.from(line).toString('base64');
  const planted = [
    `aws_access_key_id = ${AWS_ID}`,
    `aws_secret_access_key = ${AWS_SECRET}`,
    `also: ${AWS_ID} ${AWS_SECRET}`,
    `auth ${JWT}`,
    `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`,
    `callback?key=${encodeURIComponent(SK).replace(/-/g, '%2D')}&gh=${GHP.replace('_', '%5F')}`,
    `env line: ${b64(`export OPENAI_API_KEY=${SK}`)}`,
    `pem line: ${b64(`-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\n-----END PRIVATE KEY-----`)}`,
    `aws line: ${b64(`${AWS_ID}:${AWS_SECRET}`)}`,
    `jwt line: ${Buffer.from(`token=${JWT}`).toString('base64url')}`,
    `json: {"note": "${[...GHP].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`,
    `wrapped at the terminal: ${GHP.slice(0, 20)}\n${GHP.slice(20)}`,
    `deploy key ${PRIVATE_VALUE} and ${b64(`DEPLOY_PRIVATE_KEY=${PRIVATE_VALUE}`)}`,
  ];
  writeFileSync(answer, `${readFileSync(answer, 'utf8')}\n${planted.join('\n')}\n`);
  const cores = [AWS_ID.slice(4, 16), AWS_SECRET.slice(8, 24), JWT.slice(-20), PEM_BODY.slice(20, 40), SK.slice(10, 26), GHP.slice(8, 30)];

  const raw = await runCli(['logs', 'bundle', session, '--no-redact', '--out', 'raw.html'], { cwd: project.root });
  expect(raw.code, raw.stderr).toBe(0);
  const result = await runCli(['logs', 'bundle', session, '--out', 'share/run.html'], {
    cwd: project.root,
    env: { DEPLOY_PRIVATE_KEY: PRIVATE_VALUE },
  });
  expect(result.code, result.stderr).toBe(0);
  const html = readFileSync(project.path('share/run.html'), 'utf8');
  for (const core of [...cores, PRIVATE_VALUE]) expect(reveals(html, core), core).toBe(false);
  expect(result.stdout).toMatch(/aws_access_key [1-9]/);
  expect(result.stdout).toMatch(/jwt [1-9]/);
  expect(result.stdout).toMatch(/private_key [1-9]/);
  // The answer itself is still there around the markers.
  expect(html).toContain('wrapped at the terminal: [redacted:github_token]');
}, 90_000);
