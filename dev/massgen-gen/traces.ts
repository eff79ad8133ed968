// execution_trace.md as massgen/execution_trace.py::ExecutionTraceWriter.to_markdown writes it.
import { traceTime, type Micros } from './clock.ts';
import { pyJsonIndent } from './py-json.ts';

function header(agent: string, model: string, started: Micros): string {
  return `# Execution Trace: ${agent}\n**Model**: ${model} | **Started**: ${traceTime(started)}\n`;
}

export function answerTrace(agent: string, model: string, started: Micros, reasoning: string, content: string): string {
  return `${header(agent, model, started)}\n### Reasoning\n${reasoning}\n\n### Tool Call: new_answer\n**Args**:\n\`\`\`json\n${pyJsonIndent({ content })}\n\`\`\`\n`;
}

export function voteTrace(
  agent: string,
  model: string,
  started: Micros,
  reasoning: string,
  vote: { anonTarget: string; targetLabel: string; reason: string; options: string[] },
): string {
  const args = pyJsonIndent({ agent_id: vote.anonTarget, reason: vote.reason });
  const options = vote.options.length > 0 ? `**Available options**: ${vote.options.join(', ')}\n` : '';
  return `${header(agent, model, started)}\n### Reasoning\n${reasoning}\n\n### Tool Call: vote\n**Args**:\n\`\`\`json\n${args}\n\`\`\`\n\n### Vote Cast: ${vote.targetLabel}\n${options}**Voted for**: ${vote.targetLabel}\n**Reason**: ${vote.reason}\n`;
}
