import { readFile } from 'node:fs/promises';

import type { LiveStatus } from './progress-line.ts';
export { progressMessage } from './progress-line.ts';
export type { LiveStatus } from './progress-line.ts';

/** What of a MassGen status.json a running cell shows (the file is rewritten every 2 s while the run goes on). */

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The status of a parsed status.json; undefined when it is not one (another JSON value). */
export function liveStatusOf(json: unknown): LiveStatus | undefined {
  if (!isObject(json)) return undefined;
  const coordination = isObject(json.coordination) ? json.coordination : {};
  const results = isObject(json.results) ? json.results : {};
  const pct = Number(coordination.completion_percentage);
  const agents: LiveStatus['agents'] = {};
  // Keyed by agent id as MassGen writes it; the log-analyzer skill's agents[] list is read too.
  const raw = Array.isArray(json.agents)
    ? Object.fromEntries(json.agents.filter(isObject).map((a, i) => [String(a.id ?? a.agent_id ?? i), a]))
    : isObject(json.agents)
      ? json.agents
      : {};
  for (const [id, a] of Object.entries(raw)) {
    if (!isObject(a)) continue;
    const error = isObject(a.error) ? String(a.error.message ?? a.error.type ?? 'error') : a.error ? String(a.error) : null;
    agents[id] = { status: typeof a.status === 'string' ? a.status : 'unknown', error };
  }
  return {
    fraction: Number.isFinite(pct) ? Math.min(1, Math.max(0, pct / 100)) : 0,
    phase: typeof coordination.phase === 'string' ? coordination.phase : 'starting',
    agents,
    winner: typeof results.winner === 'string' ? results.winner : null,
    finishReason: typeof json.finish_reason === 'string' ? json.finish_reason : null,
    complete: json.is_complete === true,
  };
}

/**
 * status.json as it is now, or undefined while it is missing or half-written: MassGen replaces it
 * every 2 s and a reader may meet it mid-write (or before the first write), which is no error.
 */
export async function readLiveStatus(file: string): Promise<LiveStatus | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return liveStatusOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** The agents' errors, one line each: `agent_a: Error code: 500 ...`. */
export function agentErrors(status: LiveStatus | undefined): string[] {
  if (!status) return [];
  return Object.entries(status.agents)
    .filter(([, a]) => a.error !== null)
    .map(([id, a]) => `${id}: ${a.error}`);
}
