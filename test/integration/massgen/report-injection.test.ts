// Issue #10, item 9: values read from a log (agent ids, the question, finish_reason_details, error
// texts) must not change the structure of ANALYSIS_REPORT.md. A MassGen log with hostile values is
// generated in a temp project and analyzed through the real CLI; a benign log gives the reference.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLogs } from '../../../dev/massgen-gen/generate.ts';
import type { ScenarioScript } from '../../../dev/massgen-gen/model.ts';
import { runCli, tempProject, type TempProject } from '../../helpers/project.ts';

const EVIL_A = 'agent_a\n# INJECTED HEADING\n\n```mermaid\nflowchart LR\n  x-->y';
const EVIL_B = '<img src=x onerror=alert(1)>';
const EVIL_C = 'c|d|e`x`"]-->n0["<b>pwn</b>"];';
const QUESTION = 'Explain threads.\n# INJECTED QUESTION\n```\n<img src=x onerror=alert(2)>\n| a | b |';
interface ErrorTexts {
  details: string;
  error: string;
  reason: string;
}
const HOSTILE_ERRORS: ErrorTexts = {
  details:
    'Agent(s) encountered errors\n## INJECTED DETAILS\n<img src=x onerror=alert(3)> ![t](http://x.test/p.png) [l](javascript:alert(4))',
  // A lone CR ends a line in Markdown as LF does.
  error: 'HTTP 500\r| injected | row |\r### INJECTED ERROR\n<img src=x onerror=alert(5)> | extra | cells |\n~~~\n',
  reason: 'api_error`|\n# INJECTED REASON ``` |',
};
const BENIGN_ERRORS: ErrorTexts = { details: 'Agent(s) encountered errors', error: 'HTTP 500', reason: 'api_error' };

function script(name: string, agents: [string, string, string], question: string): ScenarioScript {
  const [a, b, c] = agents;
  return {
    name,
    summary: name,
    agents,
    model: 'm',
    mode: 'automation',
    turns: [
      {
        question,
        attempts: [
          [
            { kind: 'answer', agent: a },
            { kind: 'answer', agent: b },
            { kind: 'enforce', agent: c, reason: 'api_error' },
            { kind: 'answer', agent: c },
            { kind: 'vote', agent: a, target: b },
            { kind: 'vote', agent: b, target: b },
            { kind: 'vote', agent: c, target: b },
            { kind: 'present' },
          ],
        ],
      },
    ],
  };
}

/** Puts texts where a log's error fields are: finish_reason_details, an agent's error, an enforcement reason and message. */
function setErrors(file: string, texts: ErrorTexts): void {
  const status = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
  status.finish_reason = 'error';
  status.finish_reason_details = texts.details;
  const agents = Object.values(status.agents as Record<string, any>);
  agents[0].error = { type: 'api_error', message: texts.error };
  for (const agent of agents)
    for (const attempt of agent.reliability?.enforcement_attempts ?? []) {
      attempt.reason = texts.reason;
      attempt.error_message = texts.error;
    }
  writeFileSync(file, JSON.stringify(status, null, 2));
}

async function analyzeGenerated(project: TempProject, scripts: ScenarioScript[], errors: ErrorTexts): Promise<string> {
  const out = project.path('logs');
  const [logDir] = generateLogs({ outDir: out, seed: 7, scripts }).logDirs;
  const turn = path.join('logs', logDir as string, 'turn_1');
  setErrors(project.path(path.join(turn, 'attempt_1', 'status.json')), errors);
  const run = await runCli(['logs', 'analyze', '--log-dir', turn], { cwd: project.root });
  expect(run.code, run.stderr).toBe(0);
  return readFileSync(project.path(path.join(turn, 'ANALYSIS_REPORT.md')), 'utf8');
}

/** Lines as Markdown sees them: LF, CRLF and a lone CR all end one. */
const lines = (report: string): string[] => report.split(/\r\n?|\n/);
const headings = (report: string): string[] => lines(report).filter((l) => /^ {0,3}#{1,6}(\s|$)/.test(l));
const fenceLines = (report: string): string[] => lines(report).filter((l) => /^ {0,3}(`{3,}|~{3,})/.test(l));

/** Cells of a table row: split on pipes that no backslash escapes. */
function columns(row: string): number {
  return row.trim().replace(/\\\\/g, '').replace(/\\\|/g, '').split('|').length - 2;
}

function tables(report: string): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  for (const line of [...lines(report), '']) {
    if (line.startsWith('|')) current.push(line);
    else if (current.length) {
      out.push(current);
      current = [];
    }
  }
  return out;
}

function mermaidBlocks(report: string): string[][] {
  return [...report.matchAll(/^```mermaid\n([\s\S]*?)\n```$/gm)].map((m) => (m[1] as string).split('\n'));
}

const GANTT_LINE =
  /^(gantt| {4}title [^"`#;<>]*| {4}dateFormat HH:mm:ss| {4}axisFormat %(H:%)?M:%S| {4}tickInterval \d+(second|minute|hour)| {4}section [^:;#"`<>|[\]]+| {4}[^:;#"`<>|[\]]+ :milestone, m\d+, \d\d:\d\d:\d\d, 1s)$/;
const FLOW_LINE = /^(flowchart LR| {4}n\d+\["[^"`#;<>|[\]]+"\]| {4}n\d+ (-->|-\.->)\|"[^"`#;<>|[\]]+"\| n\d+)$/;

describe('ANALYSIS_REPORT.md from a hostile log', () => {
  let project: TempProject;
  let report: string;
  let reference: string;
  beforeAll(async () => {
    project = tempProject();
    reference = await analyzeGenerated(project, [script('benign', ['agent_a', 'agent_b', 'agent_c'], 'Explain threads.')], BENIGN_ERRORS);
    report = await analyzeGenerated(project, [script('hostile', [EVIL_A, EVIL_B, EVIL_C], QUESTION)], HOSTILE_ERRORS);
  });
  afterAll(() => project.cleanup());

  it("report - hostile ids, question and error texts add no heading: the headings are the template's", () => {
    expect(report).toContain('INJECTED HEADING');
    expect(headings(report).filter((h) => h.includes('INJECTED'))).toEqual([]);
    expect(headings(report)).toEqual(headings(reference));
  });

  it('report - no raw HTML, image or link from a log value', () => {
    expect(report).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(report).not.toMatch(/<[A-Za-z/!?]/);
    expect(report).not.toMatch(/!\[[^\]\\]*\]\(/);
    expect(report).not.toMatch(/(?<!\\)\[[^\]\\]*\]\(javascript:/);
  });

  it('report - exactly the two Mermaid blocks and their fences; every chart line is well-formed', () => {
    expect(fenceLines(report)).toEqual(['```mermaid', '```', '```mermaid', '```']);
    const [gantt, flow] = mermaidBlocks(report);
    expect(gantt?.[0]).toBe('gantt');
    expect(flow?.[0]).toBe('flowchart LR');
    expect(gantt?.filter((l) => !GANTT_LINE.test(l))).toEqual([]);
    expect(flow?.filter((l) => !FLOW_LINE.test(l))).toEqual([]);
    expect(flow?.length).toBe(mermaidBlocks(reference)[1]?.length);
  });

  it("report - every table row keeps its header's column count", () => {
    const found = tables(report);
    expect(found.length).toBe(tables(reference).length);
    for (const table of found) {
      const width = columns(table[0] as string);
      expect(
        table.filter((row) => columns(row) !== width),
        table[0],
      ).toEqual([]);
    }
    expect(report).toContain('c\\|d\\|e');
  });
});
