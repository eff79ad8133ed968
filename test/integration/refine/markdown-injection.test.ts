// Issue #10, item 9 (refine side): model answers and backend errors land in SUMMARY.md and
// critique_packet.md. Ids and labels in tables and Mermaid charts, and error texts, must not change
// those files' structure (model prose in a critique stays Markdown by intent).
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '../../helpers/fake-openai-server.ts';
import { REPO_ROOT, runCli, tempProject, type TempProject } from '../../helpers/project.ts';
import { criteriaAnswer, evaluationObject, nextTasksJson } from './helpers/answers.ts';
import { criteriaIdsIn, requestKind } from './helpers/judge-responder.ts';

const CRITERION = 'Clarity <img src=x onerror=alert(1)> | a | b `tick` "quote"\r# INJECTED CRITERION\n```';
const TASK_ID = 'T1 | x | y <img src=x onerror=alert(2)>\n# INJECTED TASK';
const GARBAGE = 'not json\n## criterion_findings\n# INJECTED REASON\n<img src=x onerror=alert(3)>\n```mermaid';

const lines = (text: string): string[] => text.split(/\r\n?|\n/);
const headings = (text: string): string[] => lines(text).filter((l) => /^ {0,3}#{1,6}(\s|$)/.test(l));
const fences = (text: string): string[] => lines(text).filter((l) => /^ {0,3}(`{3,}|~{3,})/.test(l));
const columns = (row: string): number => row.trim().replace(/\\\\/g, '').replace(/\\\|/g, '').split('|').length - 2;

function tables(text: string): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  for (const line of [...lines(text), '']) {
    if (line.startsWith('|')) current.push(line);
    else if (current.length) {
      out.push(current);
      current = [];
    }
  }
  return out;
}

describe('refine Markdown outputs with hostile model text', () => {
  let server: FakeOpenAiServer;
  let project: TempProject;
  let summary: string;
  let judgePacket: string;
  let degradedPacket: string;
  beforeAll(async () => {
    server = await startFakeOpenAiServer((req) => {
      const kind = requestKind(req.prompt);
      if (req.body.model === 'model-b' && kind === 'evaluate') return { kind: 'garbage', body: GARBAGE };
      if (kind === 'criteria') {
        const answer = JSON.parse(criteriaAnswer(4)) as { criteria: Array<{ text: string }> };
        (answer.criteria[0] as { text: string }).text = `${CRITERION}: what it means`;
        return { kind: 'content', content: JSON.stringify(answer) };
      }
      if (kind === 'evaluate') {
        const ids = criteriaIdsIn(req.prompt);
        const tasks = nextTasksJson(ids);
        (tasks.tasks[0] as { id: string }).id = TASK_ID;
        return { kind: 'content', content: JSON.stringify({ ...evaluationObject({ ids }), next_tasks: tasks }) };
      }
      return { kind: 'content', content: JSON.stringify({ summary: 's', dimensions: [] }) };
    });
    const retry = '{ max: 0 }';
    const backends = ['w', 'a', 'b'].map(
      (j) => `  judge-${j}: { kind: openai, base_url: "${server.url}", model: model-${j}, retry: ${retry} }`,
    );
    project = tempProject({
      'refinery.config.yaml': `backends:\n${backends.join('\n')}\n`,
      'deliverable/README.md': '# Tool\n',
      'previous/README.md': '# Tool\n',
    });
    cpSync(path.join(REPO_ROOT, 'pipelines/refine.yaml'), project.path('pipelines/refine.yaml'));
    const params = {
      session: 'md',
      query: 'Write a README',
      deliverable: 'deliverable/README.md',
      previous: 'previous/README.md',
      writer: 'judge-w',
      judges: 'judge-a,judge-b',
      guard: 'judge-a',
      consensus_mode: 'mean',
    };
    const run = await runCli(['run', 'refine', ...Object.entries(params).flatMap(([k, v]) => ['--param', `${k}=${v}`])], {
      cwd: project.root,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const session = project.path('.refinery/sessions/md');
    summary = readFileSync(path.join(session, 'SUMMARY.md'), 'utf8');
    judgePacket = readFileSync(path.join(session, 'round_001/critique_packet.md'), 'utf8');
    degradedPacket = readFileSync(path.join(session, 'round_001/judges/judge-b/critique_packet.md'), 'utf8');
  });
  afterAll(async () => {
    await server.close();
    project.cleanup();
  });

  it('SUMMARY.md - a hostile criterion and task id: no heading, HTML or fence of theirs; rows keep their columns; chart titles stay quoted', () => {
    expect(summary).toContain('INJECTED TASK');
    expect(headings(summary).filter((h) => h.includes('INJECTED'))).toEqual([]);
    expect(summary).not.toMatch(/<[A-Za-z/!?]/);
    const charts = [...summary.matchAll(/^```mermaid\nxychart-beta\n([\s\S]*?)\n```$/gm)].map((m) => m[1] as string);
    // One score chart per criterion, and the judges' offsets from the consensus.
    expect(charts).toHaveLength(5);
    expect(fences(summary)).toHaveLength(10);
    for (const chart of charts) expect(chart.split('\n')[0]).toMatch(/^ {2}title "[^"`<>#;|]*"$/);
    for (const table of tables(summary)) {
      const width = columns(table[0] as string);
      expect(
        table.filter((row) => columns(row) !== width),
        table[0],
      ).toEqual([]);
    }
  });

  it('critique_packet.md - a backend error text in a degraded packet adds no section, heading, HTML or fence', () => {
    expect(degradedPacket).toContain('INJECTED REASON');
    expect(headings(degradedPacket)).toEqual(['# Critique Packet (degraded)', '## Evaluation Summary']);
    expect(degradedPacket).not.toMatch(/<[A-Za-z/!?]/);
    expect(fences(degradedPacket)).toEqual([]);
    expect(headings(judgePacket).filter((h) => h.includes('INJECTED'))).toEqual([]);
  });
});
