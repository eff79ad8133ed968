// Judges that return malformed output 30 % of the time: every artifact in place is schema-valid,
// and each failure is reported as degraded with its reason.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer, type FakeReply, type RecordedRequest } from '../../helpers/fake-openai-server.ts';
import { seededRandom } from '../../../src/workflows/refine/seeded.ts';
import { SchemaRegistry } from '../../../src/engine/artifacts/schema-registry.ts';
import { evaluationObject, voteAnswer } from './helpers/answers.ts';
import { criteriaIdsIn, isRepair, labelsShown, requestKind } from './helpers/judge-responder.ts';
import { readJson, runTask } from './helpers/task-context.ts';
import evaluateBackend from '../../../tasks/evaluate-backend.ts';
import consensus from '../../../tasks/consensus.ts';

type Quality = 'good' | 'partial' | 'fatal';
/** Each call is malformed with probability 0.3, independently; the seed is fixed so the run is reproducible,
 * and the test asserts that it exercises every path (ok, degraded plan, degraded verdict). */
const SEED = 'malformed-4';
const MALFORMED = [
  (ids: string[]) => `The deliverable looks solid overall. I'd give it ${ids.length} stars.`,
  (ids: string[]) => JSON.stringify(evaluationObject({ ids })).slice(0, 200),
  (ids: string[]) => JSON.stringify({ ...evaluationObject({ ids }), scores: Object.fromEntries(ids.map((id) => [id, 'high'])) }),
  (ids: string[]) => JSON.stringify({ ...evaluationObject({ ids }), verdict: 'maybe' }),
  () => '<html><body>Gateway Timeout</body></html>',
];

const JUDGES = Array.from({ length: 20 }, (_, i) => `j${String(i + 1).padStart(2, '0')}`);
/** What the server sent to each (model, kind, round, repair) request. */
const sent = new Map<string, Quality>();

function key(req: RecordedRequest): string {
  const round = /# (?:Consensus|Evaluation) round (\d+)/.exec(req.prompt)?.[1] ?? '0';
  return `${req.body.model}|${requestKind(req.prompt)}|${round}|${isRepair(req.prompt) ? 'repair' : 'first'}`;
}

function responder(req: RecordedRequest): FakeReply {
  const ids = criteriaIdsIn(req.prompt);
  const k = key(req);
  const random = seededRandom(`${SEED}|${k}`);
  const roll = random();
  const kind = requestKind(req.prompt);
  let quality: Quality = roll < 0.3 ? 'fatal' : 'good';
  // A tenth of the good evaluations carry a broken plan: usable verdict, degraded next_tasks.
  if (quality === 'good' && kind === 'evaluate' && random() < 0.15) quality = 'partial';
  sent.set(k, quality);
  const pick = MALFORMED[Math.floor(random() * MALFORMED.length)] as (ids: string[]) => string;
  if (quality === 'fatal') return { kind: 'content', content: kind === 'vote' ? pick(ids).replace('verdict', 'action') : pick(ids) };
  if (kind === 'vote') return { kind: 'content', content: voteAnswer(labelsShown(req.prompt)[0] ?? 'A') };
  const answer = evaluationObject({ ids, scores: 4 + (Number(String(req.body.model).slice(1)) % 6) });
  if (quality === 'partial')
    return { kind: 'content', content: JSON.stringify({ ...answer, next_tasks: { strategy_mode: 'thesis_shift', tasks: [] } }) };
  return { kind: 'content', content: JSON.stringify(answer) };
}

let server: FakeOpenAiServer;
let root: string;
beforeAll(async () => {
  server = await startFakeOpenAiServer(responder);
  root = mkdtempSync(path.join(tmpdir(), 'refinery-malformed-'));
  writeFileSync(
    path.join(root, 'refinery.config.yaml'),
    `backends:\n${JUDGES.map((j) => `  ${j}: {kind: openai, base_url: "${server.url}", model: ${j}}`).join('\n')}\n`,
  );
  mkdirSync(path.join(root, 'refine'));
  writeFileSync(
    path.join(root, 'refine/criteria.json'),
    JSON.stringify({ criteria: ['Clarity', 'Accuracy', 'Depth', 'Craft'].map((text) => ({ text })) }),
  );
  writeFileSync(path.join(root, 'page.md'), '# Page\n\nSome content.\n');
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** The outcome the judge-call rules predict from what the server sent. */
function expected(model: string): 'ok' | 'ok-plan-degraded' | 'degraded' {
  const first = sent.get(`${model}|evaluate|1|first`);
  const repair = sent.get(`${model}|evaluate|1|repair`);
  if (first === 'good') return 'ok';
  if (repair === 'good') return 'ok';
  if (first === 'partial' || repair === 'partial') return 'ok-plan-degraded';
  return 'degraded';
}

describe('judges with 30 % malformed output', () => {
  it('malformed judges - every placed artifact validates; every failure is degraded with its reason', async () => {
    const registry = new SchemaRegistry(root);
    const runs = await Promise.all(
      JUDGES.map((backend) =>
        runTask(
          evaluateBackend,
          { backend, criteria: 'refine/criteria.json', deliverable: ['page.md'] },
          {
            root,
            stage: `evaluate[${backend}]`,
            outputs: {
              verdict: `judges/${backend}/verdict.json`,
              critique: `judges/${backend}/critique_packet.md`,
              next_tasks: `judges/${backend}/next_tasks.json`,
            },
          },
        ),
      ),
    );
    const outcomes = { ok: 0, 'ok-plan-degraded': 0, degraded: 0 };
    runs.forEach((run, i) => {
      const judge = JUDGES[i] as string;
      expect(run.rejected).toEqual({});
      expect(Object.keys(run.placed).sort()).toEqual(['critique', 'next_tasks', 'verdict']);
      const verdict = readJson<Record<string, any>>(run.placed.verdict as string);
      const tasks = readJson<Record<string, any>>(run.placed.next_tasks as string);
      expect(registry.validate('verdict', verdict)).toEqual({ ok: true });
      expect(registry.validate('next-tasks', tasks)).toEqual({ ok: true });
      const want = expected(judge);
      outcomes[want]++;
      const warnings = run.reports.filter((r) => r.kind === 'warning').map((r) => (r.kind === 'warning' ? r.message : ''));
      if (want === 'degraded') {
        expect(verdict).toMatchObject({ status: 'degraded', verdict: 'iterate', scores: {} });
        expect(verdict.degraded_reason).toMatch(/^malformed output after one repair retry: /);
        expect(tasks).toMatchObject({ status: 'degraded', reason: verdict.degraded_reason });
        expect(warnings).toEqual([`${judge}: evaluation degraded: ${verdict.degraded_reason}`]);
      } else if (want === 'ok-plan-degraded') {
        expect(verdict.status).toBe('ok');
        expect(tasks.status).toBe('degraded');
        expect(tasks.reason).toContain('thesis_shift');
        expect(warnings).toEqual([`${judge}: evaluation degraded: ${tasks.reason}`]);
      } else {
        expect(verdict.status).toBe('ok');
        expect(tasks.status).toBe('ok');
        expect(warnings).toEqual([]);
      }
    });
    // The seeded 30 % must actually exercise every path.
    expect(outcomes.degraded).toBeGreaterThan(0);
    expect(outcomes['ok-plan-degraded']).toBeGreaterThan(0);
    expect(outcomes.ok).toBeGreaterThan(0);
    const fatalShare = [...sent.values()].filter((q) => q === 'fatal').length / sent.size;
    expect(fatalShare).toBeGreaterThan(0.15);

    const run = await runTask(
      consensus,
      { verdicts: JUDGES.map((j) => `judges/${j}/verdict.json`), criteria: 'refine/criteria.json', deliverable: ['page.md'] },
      {
        root,
        outputs: {
          consensus: 'out/consensus.json',
          verdict: 'out/verdict.json',
          critique: 'out/critique_packet.md',
          next_tasks: 'out/next_tasks.json',
        },
      },
    );
    expect(run.rejected).toEqual({});
    const report = readJson<Record<string, any>>(run.placed.consensus as string);
    const degradedJudges = report.judges.filter((j: { status: string }) => j.status === 'degraded');
    expect(degradedJudges).toHaveLength(outcomes.degraded);
    for (const j of degradedJudges) expect(j.reason).toMatch(/malformed output/);
    const idle = report.rounds.flatMap((r: { idle: unknown[] }) => r.idle) as Array<{ judge: string; why: string; detail: string }>;
    expect(idle.length).toBeGreaterThan(0);
    for (const entry of idle) {
      expect(entry.why).toBe('degraded');
      expect(entry.detail).toMatch(/malformed output after one repair retry/);
      expect(
        sent.get(`${entry.judge}|vote|${report.rounds.findIndex((r: { idle: unknown[] }) => r.idle.includes(entry)) + 1}|repair`),
      ).toBe('fatal');
    }
    expect(report.winner).not.toBeNull();
    expect(registry.validate('verdict', readJson(run.placed.verdict as string))).toEqual({ ok: true });
  });
});
