import { startInGroup } from './process-group.ts';

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

export interface ProcessSpec {
  executable: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, then stdin is closed; undefined closes stdin at once. */
  stdin?: string;
  timeoutMs: number;
  signal: AbortSignal;
}

const MAX_OUTPUT = 64 * 1024 * 1024;
const KILL_GRACE_MS = 2000;

/** Runs one program to its end (argv, no shell, its own process group), collecting its output. */
export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const proc = await startInGroup(spec);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let size = 0;
  let timedOut = false;
  let aborted = false;
  const collect = (into: Buffer[]) => (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_OUTPUT) into.push(chunk);
  };
  proc.child.stdout?.on('data', collect(out));
  proc.child.stderr?.on('data', collect(err));
  const timer = setTimeout(() => {
    timedOut = true;
    void proc.stop(KILL_GRACE_MS);
  }, spec.timeoutMs);
  const onAbort = (): void => {
    aborted = true;
    void proc.stop(KILL_GRACE_MS);
  };
  spec.signal.addEventListener('abort', onAbort, { once: true });
  if (spec.signal.aborted) onAbort();
  proc.child.stdin?.end(spec.stdin ?? '');
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  spec.signal.removeEventListener('abort', onAbort);
  return {
    exitCode: code,
    signal,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
    timedOut,
    aborted,
  };
}
