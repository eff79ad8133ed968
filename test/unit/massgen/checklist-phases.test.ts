import { describe, expect, it } from 'vitest';
import { checklistPhases } from '../../../src/workflows/massgen/analysis-checklist.ts';
import type { RoundRecord, RunData, ToolExecution } from '../../../src/workflows/massgen/model.ts';

function roundOf(agentId: string, roundNumber: number, startTime: number, endTime: number): RoundRecord {
  return {
    agentId,
    roundNumber,
    roundType: 'initial_answer',
    outcome: 'answer',
    startTime,
    endTime,
    durationMs: (endTime - startTime) * 1000,
    toolCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    cost: 0,
  };
}

function tool(toolName: string, agentId: string, startTime: number, executionMs: number): ToolExecution {
  return { toolName, agentId, startTime, executionMs, success: true, errorMessage: null, outputChars: 0 };
}

/** A run with the given rounds (as metrics_summary.json gives them) and tool executions (metrics_events.json). */
function run(rounds: RoundRecord[], tools: ToolExecution[], attempt = 1): RunData {
  const agents = [...new Set(rounds.map((r) => r.agentId))].map((id) => ({
    id,
    tokenUsage: null,
    rounds: rounds.filter((r) => r.agentId === id),
  }));
  return {
    attempt,
    metrics: { agents } as unknown as RunData['metrics'],
    metricsEvents: { toolExecutions: tools },
    status: null,
  } as unknown as RunData;
}

describe('checklistPhases', () => {
  it('checklistPhases - splits a round at its first submit_checklist and the end of the draft_approach after it', () => {
    const phases = checklistPhases([
      run(
        [roundOf('agent_a', 1, 100, 160)],
        [
          tool('execute_command', 'agent_a', 105, 2000),
          tool('mcp__quality__submit_checklist', 'agent_a', 120, 1000),
          tool('mcp__quality__submit_checklist', 'agent_a', 122, 1000),
          tool('mcp__quality__draft_approach', 'agent_a', 130, 5000),
          tool('execute_command', 'agent_a', 140, 3000),
        ],
      ),
    ]);
    expect(phases.rounds).toEqual([
      {
        agentId: 'agent_a',
        attempt: 1,
        round: 1,
        evaluationSeconds: 20,
        checklistToProposeSeconds: 15,
        implementationSeconds: 25,
        postChecklistSeconds: null,
      },
    ]);
    expect([phases.evaluationSeconds, phases.implementationSeconds, phases.evaluationPct, phases.implementationPct]).toEqual([
      20, 25, 44.4, 55.6,
    ]);
  });

  it('checklistPhases - a checklist with no proposal after it is post-checklist; rounds without one are left out', () => {
    const phases = checklistPhases([
      run(
        [roundOf('agent_b', 1, 0, 30), roundOf('agent_a', 2, 50, 90), roundOf('agent_a', 1, 0, 40)],
        [
          // A draft_approach before the checklist does not end it; another agent's calls do not count.
          tool('draft_approach', 'agent_a', 55, 1000),
          tool('submit_checklist', 'agent_a', 70, 500),
          tool('submit_checklist', 'agent_b', 10, 500),
          tool('submit_checklist', 'agent_c', 60, 500),
        ],
      ),
    ]);
    expect(phases.rounds).toEqual([
      {
        agentId: 'agent_a',
        attempt: 1,
        round: 2,
        evaluationSeconds: 20,
        checklistToProposeSeconds: null,
        implementationSeconds: null,
        postChecklistSeconds: 20,
      },
      {
        agentId: 'agent_b',
        attempt: 1,
        round: 1,
        evaluationSeconds: 10,
        checklistToProposeSeconds: null,
        implementationSeconds: null,
        postChecklistSeconds: 20,
      },
    ]);
    expect(phases.evaluationPct).toBe(100);
  });

  it('checklistPhases - no checklist call anywhere gives no rounds and no percentages', () => {
    const phases = checklistPhases([run([roundOf('agent_a', 1, 0, 10)], [tool('execute_command', 'agent_a', 1, 100)])]);
    expect(phases).toEqual({ rounds: [], evaluationSeconds: 0, implementationSeconds: 0, evaluationPct: null, implementationPct: null });
  });
});
