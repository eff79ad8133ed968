// The bundled scenarios: scripts of who answers, votes, retries and when. The PRNG only varies
// timing, tokens and wording; the structure (and so the manifest's counts) is fixed per scenario.
import type { ScenarioScript, Step } from './model.ts';

const answer = (agent: string): Step => ({ kind: 'answer', agent });
const vote = (agent: string, target: string): Step => ({ kind: 'vote', agent, target });
const ignored = (agent: string, target: string): Step => ({ kind: 'vote-ignored', agent, target });
const enforce = (agent: string, reason: Extract<Step, { kind: 'enforce' }>['reason']): Step => ({ kind: 'enforce', agent, reason });
const present: Step = { kind: 'present' };

export const SCENARIOS: readonly ScenarioScript[] = [
  {
    name: 'consensus',
    summary: '3 agents, one answer each, one vote overtaken by a restart, unanimous vote for agent_b',
    agents: ['agent_a', 'agent_b', 'agent_c'],
    model: 'openai/gpt-4o-mini',
    mode: 'automation',
    turns: [
      {
        question: 'Explain the difference between a process and a thread in two short paragraphs.',
        attempts: [
          [
            answer('agent_a'),
            answer('agent_b'),
            ignored('agent_a', 'agent_a'),
            answer('agent_c'),
            vote('agent_b', 'agent_b'),
            vote('agent_c', 'agent_b'),
            vote('agent_a', 'agent_b'),
            present,
          ],
        ],
      },
    ],
  },
  {
    name: 'enforcement',
    summary: 'workflow-rule violations and an API error, each retried; agent_a re-votes after a late answer; one ignored vote',
    agents: ['agent_a', 'agent_b', 'agent_c'],
    model: 'scripted-model',
    mode: 'automation',
    turns: [
      {
        question: 'List three practical tips for writing readable Python code.',
        attempts: [
          [
            enforce('agent_a', 'vote_no_answers'),
            answer('agent_a'),
            answer('agent_b'),
            enforce('agent_c', 'no_workflow_tool'),
            enforce('agent_a', 'vote_and_answer'),
            vote('agent_a', 'agent_a'),
            enforce('agent_b', 'no_tool_calls'),
            enforce('agent_b', 'api_error'),
            answer('agent_c'),
            vote('agent_a', 'agent_a'),
            ignored('agent_b', 'agent_a'),
            enforce('agent_b', 'invalid_vote_id'),
            vote('agent_c', 'agent_a'),
            vote('agent_b', 'agent_a'),
            present,
          ],
        ],
      },
    ],
  },
  {
    name: 'restart',
    summary: 'post-evaluation restarts the orchestration: turn_1/attempt_1 is superseded, turn_1/attempt_2 completes',
    agents: ['agent_1', 'agent_2'],
    model: 'openai/gpt-4.1-mini',
    mode: 'automation',
    turns: [
      {
        question: 'Write a haiku about code review and explain its imagery.',
        attempts: [
          [
            answer('agent_1'),
            answer('agent_2'),
            vote('agent_1', 'agent_1'),
            vote('agent_2', 'agent_1'),
            present,
            { kind: 'restart-orchestration', reason: 'The explanation of the imagery is missing.' },
          ],
          [answer('agent_2'), answer('agent_1'), vote('agent_2', 'agent_2'), vote('agent_1', 'agent_2'), present],
        ],
      },
    ],
  },
  {
    name: 'multi-turn',
    summary: 'interactive session with two turns in one log dir; agent ids are not agent_* and config order differs from label order',
    agents: ['writer', 'critic', 'researcher'],
    model: 'openai/gpt-4o-mini',
    mode: 'interactive',
    turns: [
      {
        question: 'Draft a one-paragraph product description for a solar-powered lantern.',
        attempts: [
          [
            answer('researcher'),
            answer('writer'),
            answer('critic'),
            vote('critic', 'writer'),
            vote('researcher', 'writer'),
            vote('writer', 'writer'),
            present,
          ],
        ],
      },
      {
        question: 'Now shorten it to two sentences and add a call to action.',
        attempts: [
          [
            answer('critic'),
            answer('writer'),
            vote('researcher', 'writer'),
            answer('writer'),
            vote('critic', 'writer'),
            vote('researcher', 'writer'),
            vote('writer', 'writer'),
            present,
          ],
        ],
      },
    ],
  },
  {
    name: 'crashed',
    summary: 'killed (SIGKILL) after all answers and two votes: no end-of-run files, status.json in_progress',
    agents: ['agent_a', 'agent_b', 'agent_c'],
    model: 'scripted-model',
    mode: 'automation',
    turns: [
      {
        question: 'Summarize the causes of the French Revolution in three bullet points.',
        attempts: [
          [
            answer('agent_a'),
            answer('agent_b'),
            answer('agent_c'),
            vote('agent_a', 'agent_a'),
            vote('agent_b', 'agent_a'),
            { kind: 'kill' },
          ],
        ],
      },
    ],
  },
];

export const SCENARIO_NAMES: readonly string[] = SCENARIOS.map((s) => s.name);
