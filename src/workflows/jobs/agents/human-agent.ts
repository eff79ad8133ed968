import type { Agent, AgentExit, AgentHandle, AgentLaunch } from './agent.ts';

/** A person: the instructions are shown to them (through `show`) and they publish the events by hand. */
export class HumanAgent implements Agent {
  readonly kind = 'human';

  constructor(private readonly show: (instructions: string, launch: AgentLaunch) => void) {}

  describe(): string {
    return 'human';
  }

  async start(launch: AgentLaunch): Promise<AgentHandle> {
    this.show(launch.instructions, launch);
    return { ownsProcess: false, exited: new Promise<AgentExit>(() => undefined), stop: async () => {} };
  }
}
