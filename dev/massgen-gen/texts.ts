// Text fragments of the synthetic runs: answers, vote reasons, prompts and the shortened
// system prompt (the real one is 13-19 KB per snapshot; this one keeps the example small).
import type { PyValue } from './py-json.ts';
import type { Rng } from './prng.ts';

const STYLES = [
  'A concise answer: the key point is stated first, followed by two supporting facts.',
  'A structured answer: definition, a worked example, and a short caveat section.',
  'A comparative answer: it weighs two approaches and recommends one with reasons.',
  'A step-by-step answer: numbered steps, each with the reason it matters.',
  'A checklist answer: five short items, each testable on its own.',
];

export function answerText(rng: Rng, agent: string, version: number, question: string): string {
  const style = rng.pick(STYLES);
  const revision = version > 1 ? ` Revision ${version}: adds a worked example and fixes an omission noticed in the other answers.` : '';
  return `[${agent} answer v${version}] Regarding '${question}': ${style}${revision}`;
}

export const voteReason = (label: string): string => `${label} is the most complete and accurate answer.`;

export function finalText(winner: string, answer: string): string {
  return `## Final answer (presented by ${winner})\n\n${answer}\n\n- Key point stated first\n- Supporting facts listed\n- Caveats noted`;
}

export const CRITERIA: { id: string; text: string; category: string }[] = [
  {
    id: 'E1',
    text: 'Spec fidelity: the output implements what the changedoc specifies — each goal and requirement as described.',
    category: 'standard',
  },
  { id: 'E2', text: 'Multi-level correctness: the output works as experienced, not just as inspected.', category: 'standard' },
  { id: 'E3', text: 'Per-part depth: every significant component meets the quality bar on its own.', category: 'primary' },
  { id: 'E4', text: 'Intentional craft: structure, style and detail reflect judgment, not template-filling.', category: 'standard' },
];

export const criteriaEventData = (): Record<string, PyValue> => ({
  criteria: CRITERIA.map((c) => ({ ...c, verify_by: null })),
  source: 'changedoc',
});

const SYSTEM_PROMPT = [
  '<system_prompt>',
  '',
  '<output_first_iteration priority="critical">',
  '## Output-First Iteration',
  '',
  '**Core Principle: Experience your work exactly as a user would — through dynamic interaction, not just static observation.**',
  '',
  '[synthetic log: the remaining ~13 KB of the MassGen system prompt are omitted]',
  '</output_first_iteration>',
  '',
  '</system_prompt>',
].join('\n');

function workflowTools(voteEnum: string[] | null): PyValue {
  const agentId: Record<string, PyValue> = {
    type: 'string',
    description: "Anonymous agent ID to vote for (e.g., 'agent1', 'agent2')",
  };
  if (voteEnum) agentId.enum = voteEnum;
  return [
    {
      type: 'function',
      function: {
        name: 'new_answer',
        description: 'Provide an improved answer to the ORIGINAL MESSAGE',
        parameters: {
          type: 'object',
          properties: { content: { type: 'string', description: 'Your improved answer (HIGH-LEVEL summary)' } },
          required: ['content'],
        },
      },
    },
    {
      type: 'function',
      function: {
        name: 'vote',
        description: 'Vote for the best agent to present final answer',
        parameters: {
          type: 'object',
          properties: {
            agent_id: agentId,
            reason: { type: 'string', description: 'Brief reason why this agent has the best answer' },
          },
          required: ['agent_id', 'reason'],
        },
      },
    },
  ];
}

/** context.txt of a round snapshot: {system_message, user_message, tools} */
export function roundContext(question: string, seen: { label: string; text: string }[], anonIds: string[]): PyValue {
  const answers =
    seen.length === 0 ? '(no answers available yet)' : seen.map((a) => `<${a.label}> ${a.text} <end of ${a.label}>`).join('\n');
  return {
    system_message: SYSTEM_PROMPT,
    user_message: `<ORIGINAL MESSAGE> ${question} <END OF ORIGINAL MESSAGE>\n\n<CURRENT ANSWERS from the agents>\n${answers}\n<END OF CURRENT ANSWERS>`,
    tools: workflowTools(seen.length === 0 ? null : anonIds),
  };
}

export const PRESENTER_PROMPT = [
  'You have been selected as the winning presenter in a coordination process.',
  'Present the best possible coordinated answer by combining the strengths from all participants.',
  '',
  'When you have composed your final answer, submit it using the `new_answer` tool.',
].join('\n');

export const TEXT_FRAGMENTS = [
  'Looking at the question again, ',
  'the strongest answer states the main point first',
  ' and then backs it up with two concrete facts. ',
  'I will compare the current answers on completeness, ',
  'accuracy and readability before deciding. ',
  'One caveat is worth adding: ',
  'the example should be runnable as written. ',
  'Checking the wording of each claim — ',
  'the summary is accurate and nothing is missing. ',
];

export const THINKING_FRAGMENTS = [
  'Comparing the answers side by side; ',
  'agent1 covers the basics, ',
  'agent2 adds a worked example, ',
  'agent3 weighs two approaches. ',
  'The key criterion is correctness, ',
  'then depth of each part. ',
  'Re-reading the original message to be sure. ',
  'Nothing contradicts the chosen answer. ',
];

/** Split text into fixed-size streaming fragments (the fake server streams 24-char chunks). */
export function chunks(text: string, size = 24): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
