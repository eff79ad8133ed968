// Three OpenAI-compatible judges (one real HTTP server on 127.0.0.1 each) that never vote: in every
// consensus round each one answers anew, so consensus is forced when its rounds run out. SUMMARY.md,
// consensus.json and the dashboard's API must tell the same story: forced after N rounds with no votes,
// the winner chosen by which rule, and the verdict and scores taken from whose answer in which round.
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer, type RecordedRequest } from '../../helpers/fake-openai-server.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { skipWithout } from '../../helpers/system-tools.ts';
import { CHROMIUM, launchBrowser, openDashboard, route } from '../ui/browser.ts';
import { UiProcess } from '../ui/ui-process.ts';
import { criteriaAnswer, evaluationObject } from './helpers/answers.ts';
import { criteriaIdsIn, requestKind } from './helpers/judge-responder.ts';
import { invalidArtifacts, readJson } from './helpers/session-files.ts';

const JUDGES = ['judge-a', 'judge-b', 'judge-c'];
/** Raw HTML in the deliverable: shown on the refine page, it must run nothing. */
const HOSTILE =
  '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script><a href="javascript:window.__pwned = 3">docs</a>';
/** Round-1 scores per judge: E1 within 7-9 and E4 within 1-6 across the three. */
const FIRST: Record<string, Record<string, number>> = {
  'judge-a': { E1: 7, E2: 5, E3: 5, E4: 1 },
  'judge-b': { E1: 8, E2: 6, E3: 6, E4: 4 },
  'judge-c': { E1: 9, E2: 7, E3: 7, E4: 6 },
};

/** A judge that evaluates with its own scores and, in every consensus round, answers anew instead of voting. */
function neverVotes(judge: string) {
  return (request: RecordedRequest) => {
    const ids = criteriaIdsIn(request.prompt);
    const kind = requestKind(request.prompt);
    if (kind === 'criteria') return { kind: 'content' as const, content: criteriaAnswer(4) };
    if (kind === 'evaluate')
      return { kind: 'content' as const, content: JSON.stringify(evaluationObject({ ids, scores: FIRST[judge], note: judge })) };
    const round = Number(/# Consensus round (\d+)/.exec(request.prompt)?.[1] ?? 0);
    // Round 3's new answers are far outside every judge's round-1 range (E1=2, E4=10), and say converged.
    const scores = round === 3 ? { E1: 2, E2: 5, E3: 5, E4: 10 } : { E1: 5, E2: 5, E3: 5, E4: 5 };
    const evaluation = evaluationObject({ ids, scores, verdict: round === 3 ? 'converged' : 'iterate', note: `${judge} r${round}` });
    return { kind: 'content' as const, content: JSON.stringify({ action: 'new_answer', target: null, reason: null, evaluation }) };
  };
}

describe('refine - consensus forced because the judges never vote', () => {
  const servers: FakeOpenAiServer[] = [];
  let project: TempProject;
  let ui: UiProcess | undefined;
  let dir: string;

  beforeAll(async () => {
    for (const judge of JUDGES) servers.push(await startFakeOpenAiServer(neverVotes(judge)));
    const entries = JUDGES.map((j, i) => `  ${j}: { kind: openai, base_url: "${servers[i]?.url}", model: model-${j.slice(-1)} }`);
    project = tempProject({
      'refinery.config.yaml': `backends:\n${entries.join('\n')}\n`,
      'deliverable/README.md': `# Tool\n\nRun \`tool --help\` to see every option.\n\n${HOSTILE}\n`,
    });
    cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
    const params = {
      session: 'forced',
      query: 'Write a README for the tool',
      deliverable: 'deliverable/README.md',
      judges: JUDGES.join(','),
    };
    const run = await runCli(['run', 'refine', ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`])], {
      cwd: project.root,
    });
    expect(run.code, `${run.stdout.slice(-3000)}\n${run.stderr}`).toBe(0);
    dir = project.path('.refinery/sessions/forced');
  }, 120_000);

  afterAll(async () => {
    await ui?.stop();
    await Promise.all(servers.map((s) => s.close()));
    project?.cleanup();
  });

  it('refine - judges that answer anew in every consensus round: consensus.json says forced after 3 rounds, no votes, the first-answer rule and the answer used', () => {
    expect(invalidArtifacts(dir)).toEqual([]);
    const consensus = readJson(path.join(dir, 'round_001/consensus.json'));
    expect(consensus).toMatchObject({ mode: 'vote', forced: true, forced_reason: 'max_rounds', tally: {}, votes: [] });
    expect(consensus.rounds).toHaveLength(3);
    expect(consensus.decided_by).toBe('first_answer');
    // The winner is the first judge in registration order; its verdict and scores are its latest answer: round 3.
    expect(consensus.source).toMatchObject({ judge: 'judge-a', round: 3, step: 3 });
    const verdict = readJson(path.join(dir, 'round_001/verdict.json'));
    expect(verdict.scores).toEqual({ E1: 2, E2: 5, E3: 5, E4: 10 });
    // Every answer the consensus saw is recorded with its verdict and scores, so the used one can be found.
    const used = consensus.answers.find(
      (a: { judge: string; step: number }) => a.judge === consensus.source.judge && a.step === consensus.source.step,
    );
    expect(used).toMatchObject({ round: 3, verdict: 'converged', scores: verdict.scores });
    expect(consensus.answers).toHaveLength(9);
  });

  it('refine - a forced consensus: SUMMARY.md says forced, with no votes, by which rule, from whose answer in which round', () => {
    const md = readFileSync(path.join(dir, 'SUMMARY.md'), 'utf8');
    expect(md).not.toContain('stopped because the judges converged');
    expect(md).toContain('stopped because the verdict of round 1 is converged, from a forced consensus');
    const decision = readJson(path.join(dir, 'round_001/consensus.json')).decision as string;
    expect(decision).toMatch(
      /^Consensus was forced by max_rounds after 3 consensus rounds .* with no votes: judge-a won by the first-answer rule/,
    );
    expect(decision).toMatch(/the verdict and scores are judge-a's answer from consensus round 3/);
    expect(md).toContain(`**Round 1's consensus**: ${decision}`);
    // The answer the scores came from is listed with its scores, marked as the one used.
    expect(md).toMatch(/\| judge-a \| 3 \| converged \| 2 \| 5 \| 5 \| 10 \| verdict and scores \|/);
    const summary = readJson(path.join(dir, 'summary.json'));
    expect(summary.rounds[0]).toMatchObject({
      forced: true,
      forced_reason: 'max_rounds',
      decided_by: 'first_answer',
      votes_cast: 0,
      consensus_rounds: 3,
      source: { judge: 'judge-a', round: 3, step: 3 },
    });
  });

  it('refine - a forced consensus: the dashboard API carries the same decision, as summary.json and consensus.json', async () => {
    ui = new UiProcess(['ui'], project.root);
    await ui.ready;
    const answer = await ui.request('/api/refine/sessions/forced', { auth: true });
    expect(answer.status).toBe(200);
    const data = JSON.parse(answer.body);
    const consensus = data.rounds[0].consensus;
    expect(consensus).toMatchObject({
      forced: true,
      forced_reason: 'max_rounds',
      decided_by: 'first_answer',
      source: { judge: 'judge-a', round: 3 },
    });
    expect(data.summary.rounds[0]).toMatchObject({ decided_by: 'first_answer', source: { judge: 'judge-a', round: 3 } });
    expect(consensus.decision).toBe(data.summary.rounds[0].decision);
  });

  it.skipIf(skipWithout(CHROMIUM))(
    'refine page - a forced consensus: the page shows the decision sentence and the answer the scores came from, and the deliverable beside them runs none of its HTML',
    async () => {
      ui ??= new UiProcess(['ui'], project.root);
      const [browser] = await Promise.all([launchBrowser(), ui.ready]);
      try {
        const { go, page, problems, shot } = await openDashboard(browser, ui as UiProcess);
        await go(route('refine', 'forced'));
        await page.waitForSelector('#view .consensus .decision');
        const decision = readJson(path.join(dir, 'round_001/consensus.json')).decision as string;
        expect(await page.textContent('#view .consensus .decision')).toBe(decision);
        expect(await page.textContent('#view')).not.toContain('harshest/mean mode');
        expect(await page.textContent('#view .page-head')).toContain('verdict from a forced consensus (max_rounds)');
        expect(await page.textContent('#view .consensus')).toContain('No votes in 3 consensus rounds');
        // The answer used: judge-a's in consensus round 3, with the scores the round reports.
        const used = await page.$$eval('#view .consensus-answers tr.used-answer td', (tds) => tds.map((td) => td.textContent));
        expect(used.slice(0, 7)).toEqual(['judge-a', '3', 'converged', '2', '5', '5', '10']);
        await page.waitForSelector('#view .deliverable-file h1');
        expect(await page.textContent('#view .deliverable-file h1')).toBe('Tool');
        expect(await page.textContent('#view .consensus-from')).toBe(
          "consensus column: judge-a's answer from consensus round 3, given instead of a vote (consensus forced: max_rounds)",
        );
        expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
        expect(
          await page.$$eval(
            '#view .deliverable img[onerror], #view .deliverable script, #view .deliverable a[href^="javascript"]',
            (e) => e.length,
          ),
        ).toBe(0);
        await shot('refine-forced-consensus');
        // DOMPurify parses the hostile HTML before dropping it; the page's CSP reports the handler it refused to run.
        expect(problems.filter((p) => !p.includes('Content Security Policy') && !p.includes('/x'))).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
