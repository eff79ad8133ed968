// Which MassGen session (`--session-id`) a log folder belongs to, from what MassGen writes into it
// (massgen/cli.py, v0.1.91):
//   - massgen.log of the run that starts a session: `📝 Created session for single-question mode: S`
//     (or `interactive mode`) and `📝 Registered new session in registry: S`;
//   - massgen.log of a run continuing one: `📚 Using session from CLI: S` (or `from config`);
//   - execution_metadata.yaml `cli_args.session_id: S` (automation: all of vars(args), so a non-null
//     value is a --session-id / --continue run; interactive turns and restart attempts write
//     {mode, turn, session_id, …}: the run's own session),
//     or `config.session_id` (a session named in the YAML config is restored, as with --session-id).
// The session registry (~/.massgen/sessions.json, which maps S to the first log folder) lives
// outside the logs, so the link is made from these markers: the folder holding `Created ... S`
// is the one a later folder with `Using session ... S` continues.

export type SessionRole = 'created' | 'continued' | 'member';

export interface SessionMarker {
  id: string;
  role: SessionRole;
  /** The file (and line) that says so. */
  evidence: string;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const LOG_MARKER = /(Created session for [\w-]+ mode|Using session from (?:CLI|config)): (\S+)/;
/** What a massgen.log line must hold to be worth a regex. */
export const LOG_MARKER_HINT = Buffer.from(' session ');

export function validSessionId(value: unknown): value is string {
  return typeof value === 'string' && SESSION_ID.test(value);
}

/** A marker in one massgen.log line's text, or null. */
export function markerOfLogLine(text: string): { id: string; role: 'created' | 'continued' } | null {
  const m = LOG_MARKER.exec(text);
  if (!m || !validSessionId(m[2])) return null;
  return { id: m[2], role: m[1]?.startsWith('Created') ? 'created' : 'continued' };
}

/** The marker execution_metadata.yaml gives (cli_args.session_id, else config.session_id). */
export function markerOfMetadata(
  cliSessionId: string | null,
  cliMode: string | null,
  configSessionId: string | null,
  evidence: string,
): SessionMarker | null {
  if (validSessionId(cliSessionId)) {
    // The automation dump (all of vars(args)) has no `mode`: a session id there was asked for.
    // `{mode: interactive|coordination_restart|…, session_id}` names the run's own session.
    return { id: cliSessionId, role: cliMode === null ? 'continued' : 'member', evidence: `${evidence} cli_args.session_id` };
  }
  if (validSessionId(configSessionId)) return { id: configSessionId, role: 'continued', evidence: `${evidence} config.session_id` };
  return null;
}

const RANK: Record<SessionRole, number> = { continued: 3, created: 2, member: 1 };

/** One marker for a turn or a folder: continuing says the most, then creating, then plain membership. */
export function strongestMarker(markers: readonly SessionMarker[]): SessionMarker | null {
  let best: SessionMarker | null = null;
  for (const m of markers) if (!best || RANK[m.role] > RANK[best.role]) best = m;
  return best;
}
