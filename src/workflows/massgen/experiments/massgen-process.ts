import path from 'node:path';
import { createInterface } from 'node:readline';
import { startInGroup } from '../../../engine/shell/process-group.ts';
import { type LiveStatus, readLiveStatus } from './status-progress.ts';

export interface MassgenRunSpec {
  /** The command's words and MassGen's arguments: ['uv', 'run', 'massgen', '--automation', ...]. */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** No limit when undefined. */
  timeoutMs?: number;
  signal: AbortSignal;
  /** How often status.json is read (MassGen rewrites it every 2 s). */
  pollMs?: number;
  /** Told of the status each time it changes, and at least every `heartbeatMs` while the run goes on. */
  onProgress(status: LiveStatus | undefined, elapsedMs: number): void;
  heartbeatMs?: number;
  /** Told once, as soon as MassGen prints its LOG_DIR line (absolute). */
  onLogDir?(logDir: string): void;
}

export interface MassgenOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  logDir?: string;
  statusFile?: string;
  answerFile?: string;
  /** The last lines MassGen wrote to stderr (the live protocol lines and events left out). */
  stderrTail: string[];
  lastStatus?: LiveStatus;
  timedOut: boolean;
  aborted: boolean;
  durationMs: number;
}

const TAIL_LINES = 20;
/** After SIGTERM, how long the group has to exit before SIGKILL. */
const GRACE_MS = 2000;

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * Runs one MassGen automation run in its own process group and follows it: the LOG_DIR/STATUS
 * lines (stdout, or stderr with --stream-events; absolute or relative to cwd), status.json while
 * it runs, ANSWER at the end. A timeout or the signal stops the whole group (grandchildren too),
 * and whatever of the group outlives MassGen itself is killed when it exits.
 */
export async function runMassgen(spec: MassgenRunSpec): Promise<MassgenOutcome> {
  const [executable, ...args] = spec.argv;
  if (!executable) throw new Error('no MassGen command given');
  const started = Date.now();
  const out: MassgenOutcome = { exitCode: null, signal: null, stderrTail: [], timedOut: false, aborted: false, durationMs: 0 };
  const proc = await startInGroup({ executable, args, cwd: spec.cwd, env: spec.env });
  const protocolLine = (line: string): boolean => {
    const m = /^(LOG_DIR|STATUS|ANSWER):\s*(.+?)\s*$/.exec(line);
    if (!m) return false;
    const abs = path.resolve(spec.cwd, m[2] as string);
    if (m[1] === 'LOG_DIR') {
      if (out.logDir === undefined) spec.onLogDir?.(abs);
      out.logDir = abs;
    } else if (m[1] === 'STATUS') out.statusFile = abs;
    else out.answerFile = abs;
    return true;
  };
  if (proc.child.stdout) createInterface({ input: proc.child.stdout }).on('line', (line) => protocolLine(line));
  if (proc.child.stderr)
    createInterface({ input: proc.child.stderr }).on('line', (line) => {
      if (protocolLine(line)) return;
      out.stderrTail.push(line);
      if (out.stderrTail.length > TAIL_LINES) out.stderrTail.shift();
    });
  // Whatever of the group outlives MassGen (a tool server, a hung helper) goes with it.
  proc.child.once('exit', () => killGroup(proc.child.pid, 'SIGKILL'));

  let lastText = '';
  let lastEmit = 0;
  let polling = false;
  const poll = async (): Promise<void> => {
    if (polling || !out.statusFile) return;
    polling = true;
    try {
      const status = await readLiveStatus(out.statusFile);
      if (status) out.lastStatus = status;
      const text = JSON.stringify(status ?? null);
      const now = Date.now();
      if (text !== lastText || now - lastEmit >= (spec.heartbeatMs ?? 2000)) {
        lastText = text;
        lastEmit = now;
        spec.onProgress(out.lastStatus, now - started);
      }
    } finally {
      polling = false;
    }
  };
  const timer = setInterval(() => void poll(), spec.pollMs ?? 500);
  const stop = (why: 'timedOut' | 'aborted') => {
    out[why] = true;
    void proc.stop(GRACE_MS);
  };
  const deadline = spec.timeoutMs ? setTimeout(() => stop('timedOut'), spec.timeoutMs) : undefined;
  const onAbort = () => stop('aborted');
  if (spec.signal.aborted) onAbort();
  else spec.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const { code, signal } = await proc.exited;
    out.exitCode = code;
    out.signal = signal;
  } finally {
    clearInterval(timer);
    if (deadline) clearTimeout(deadline);
    spec.signal.removeEventListener('abort', onAbort);
    killGroup(proc.child.pid, 'SIGKILL');
  }
  if (out.statusFile) {
    const status = await readLiveStatus(out.statusFile);
    if (status) out.lastStatus = status;
    // The last word on progress, however short the run was next to the polling interval: a
    // watcher sees where it ended (100 % and the winner, or the phase it stopped in).
    if (status && JSON.stringify(status) !== lastText) spec.onProgress(status, Date.now() - started);
  }
  out.durationMs = Date.now() - started;
  return out;
}
