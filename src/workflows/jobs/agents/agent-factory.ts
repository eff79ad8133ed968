import { AgentStartError, type Agent, type AgentLaunch } from './agent.ts';
import { AGENT_PRESETS, CommandAgent } from './command-agent.ts';
import { HumanAgent } from './human-agent.ts';
import { TmuxAgent } from './tmux-agent.ts';
import type { AgentKind } from '../types.ts';

export interface AgentChoice {
  /** The agent's label in the record (claude-code, codex, human, ...). */
  name: string;
  kind?: AgentKind;
  /** `tmux:SESSION` (the seed's form) or a bare session name. */
  session: string;
  /** argv for a command agent; defaults to the preset for `name`. */
  command?: string[];
  tmuxServer?: string;
  /** How a human agent is shown its instructions. */
  show: (instructions: string, launch: AgentLaunch) => void;
}

/** human for `--agent human`; command when a command is given; otherwise tmux, as the seed. */
export function resolveAgentKind(choice: Pick<AgentChoice, 'name' | 'kind' | 'command'>): AgentKind {
  if (choice.kind) return choice.kind;
  if (choice.name === 'human') return 'human';
  if (choice.command && choice.command.length > 0) return 'command';
  return 'tmux';
}

export function makeAgent(choice: AgentChoice): Agent {
  const kind = resolveAgentKind(choice);
  if (kind === 'human') return new HumanAgent(choice.show);
  if (kind === 'tmux') return new TmuxAgent(choice.session.replace(/^tmux:/, ''), choice.tmuxServer);
  const argv = choice.command && choice.command.length > 0 ? choice.command : (AGENT_PRESETS[choice.name] ?? namedCommand(choice));
  if (!argv) {
    throw new AgentStartError(
      `no command for agent '${choice.name}': give one (after -- on the command line, or the command param), or use one of ${Object.keys(AGENT_PRESETS).join(', ')}`,
    );
  }
  return new CommandAgent(argv);
}

/**
 * A command agent asked for by kind whose name is no preset is a program itself (`worker=/path/to/script`
 * in the refine pipeline, `--agent ./my-agent --agent-kind command`): run it, without arguments.
 */
function namedCommand(choice: Pick<AgentChoice, 'name' | 'kind'>): string[] | undefined {
  return choice.kind === 'command' && choice.name.trim() !== '' ? [choice.name] : undefined;
}
