// Expected values read straight from the fixture files with minimal code, independent of src/massgen.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures');

export interface Truth {
  runDir: string;
  winner: string | null;
  answers: number;
  votes: number;
  agentIds: string[];
  enforcement: Record<string, number>;
  enforcementReasons: Record<string, number>;
  statusVoteSum: number | null;
}

const json = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const dirs = (dir: string): string[] =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => statSync(path.join(dir, n)).isDirectory())
        .sort()
    : [];
const SNAP = /^\d{8}_\d{6}_\d{6}$/;

/** Snapshot files (`answer.txt` / `vote.json`) in <agent>/<timestamp>/ dirs, final/ excluded. */
function snapshotFiles(runDir: string, name: string): number {
  let n = 0;
  for (const agent of dirs(runDir))
    for (const snap of dirs(path.join(runDir, agent))) if (SNAP.test(snap) && existsSync(path.join(runDir, agent, snap, name))) n += 1;
  return n;
}

export function truthOf(runDir: string): Truth {
  const f = (name: string): string => path.join(runDir, name);
  const status = existsSync(f('status.json')) ? json(f('status.json')) : null;
  const coord = existsSync(f('coordination_events.json')) ? json(f('coordination_events.json')) : null;
  const mappings: any[] = existsSync(f('snapshot_mappings.json')) ? Object.values(json(f('snapshot_mappings.json'))) : [];
  const count = (type: string): number => coord.events.filter((e: any) => e.event_type === type).length;
  const answers = coord
    ? count('new_answer')
    : mappings.length
      ? mappings.filter((m) => m.type === 'answer').length
      : snapshotFiles(runDir, 'answer.txt');
  const votes = coord
    ? count('vote_cast')
    : mappings.length
      ? mappings.filter((m) => m.type === 'vote').length
      : snapshotFiles(runDir, 'vote.json');
  const winner =
    status?.results?.winner ?? coord?.session_metadata?.final_winner ?? mappings.find((m) => m.type === 'final_answer')?.agent_id ?? null;
  const yamlIds = existsSync(f('execution_metadata.yaml'))
    ? [...readFileSync(f('execution_metadata.yaml'), 'utf8').matchAll(/^ {2}- id: (\S+)$/gm)].map((m) => m[1] as string)
    : [];
  const agentIds = [...new Set([...(coord?.session_metadata?.agent_ids ?? []), ...Object.keys(status?.agents ?? {}), ...yamlIds])].sort();
  const enforcement: Record<string, number> = {};
  const enforcementReasons: Record<string, number> = {};
  for (const [id, agent] of Object.entries<any>(status?.agents ?? {})) {
    const attempts: any[] = agent.reliability?.enforcement_attempts ?? [];
    enforcement[id] = attempts.length;
    for (const a of attempts) enforcementReasons[a.reason] = (enforcementReasons[a.reason] ?? 0) + 1;
  }
  const statusVoteSum = status ? Object.values<number>(status.results.votes).reduce((s, n) => s + n, 0) : null;
  return { runDir, winner, answers, votes, agentIds, enforcement, enforcementReasons, statusVoteSum };
}

/** Every run dir of the fixtures, found by plain directory listing. */
export function fixtureRuns(): { name: string; logsDir: string; runDir: string }[] {
  const out: { name: string; logsDir: string; runDir: string }[] = [];
  const real = path.join(FIXTURES, 'massgen-real/.massgen/massgen_logs');
  for (const log of dirs(real)) out.push({ name: `massgen-real/${log}`, logsDir: real, runDir: path.join(real, log) });
  const v = path.join(FIXTURES, 'massgen-v0191');
  for (const scenario of dirs(v)) {
    for (const log of dirs(path.join(v, scenario))) {
      for (const turn of dirs(path.join(v, scenario, log)).filter((d) => d.startsWith('turn_'))) {
        for (const attempt of dirs(path.join(v, scenario, log, turn)).filter((d) => d.startsWith('attempt_'))) {
          out.push({
            name: `massgen-v0191/${scenario}`,
            logsDir: path.join(v, scenario),
            runDir: path.join(v, scenario, log, turn, attempt),
          });
        }
      }
    }
  }
  return out;
}
