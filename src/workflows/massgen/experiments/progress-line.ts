// The progress line of a running MassGen cell, written by the run-massgen task into its
// stage-progress events and read back by the dashboard's experiment grid: one rule, both ways.
// No Node import here: the dashboard's page bundles this module too.

/** What a status.json says of a run, as the console and the dashboard show it. */
export interface LiveStatus {
  fraction: number;
  phase: string;
  agents: Record<string, { status: string; error: string | null }>;
  winner: string | null;
  finishReason: string | null;
  /** `is_complete`: MassGen has finished writing this run. */
  complete: boolean;
}

/** What a progress line says: the phase, each agent's status, the seconds so far. */
export interface ProgressLine {
  phase: string;
  agents: Array<{ id: string; status: string }>;
  seconds: number | null;
}

const SEP = ' · ';

/** `enforcement · agent_a voted, agent_b streaming` (no agents yet: the phase alone). */
export function progressMessage(status: Pick<LiveStatus, 'phase' | 'agents'>): string {
  const agents = Object.entries(status.agents)
    .map(([id, a]) => `${id} ${a.status}`)
    .join(', ');
  return agents ? `${status.phase}${SEP}${agents}` : status.phase;
}

/** The whole line of a stage-progress event: the status (or that none was read yet) and the seconds. */
export function progressLine(status: Pick<LiveStatus, 'phase' | 'agents'> | undefined, elapsedMs: number): string {
  return `${status ? progressMessage(status) : 'waiting for status.json'}${SEP}${Math.round(elapsedMs / 1000)}s`;
}

/** A line `progressLine` wrote, read back; other messages ('starting') are a phase alone. */
export function parseProgressLine(message: string): ProgressLine {
  const parts = message.split(SEP);
  let seconds: number | null = null;
  const last = parts.at(-1) ?? '';
  if (parts.length > 1 && /^\d+s$/.test(last)) {
    seconds = Number(last.slice(0, -1));
    parts.pop();
  }
  const phase = parts[0] ?? '';
  const agents =
    parts.length > 1
      ? (parts[1] ?? '')
          .split(', ')
          .map((pair) => {
            const cut = pair.lastIndexOf(' ');
            return cut > 0 ? { id: pair.slice(0, cut), status: pair.slice(cut + 1) } : undefined;
          })
          .filter((a): a is { id: string; status: string } => a !== undefined)
      : [];
  return { phase, agents, seconds };
}

const LOG_DIR_LINE = /^MassGen log dir: (.+)$/;

/** The stage-log line that names a running cell's log dir (root-relative) as soon as MassGen prints it. */
export function logDirLine(rel: string): string {
  return `MassGen log dir: ${rel}`;
}

/** The log dir a `logDirLine` names; undefined for any other line. */
export function logDirOf(message: string): string | undefined {
  return LOG_DIR_LINE.exec(message)?.[1];
}
