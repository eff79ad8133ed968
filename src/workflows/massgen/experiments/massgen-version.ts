import { startInGroup } from '../../../engine/shell/process-group.ts';

const VERSION_TIMEOUT_MS = 60_000;

/** `<massgen> --version`'s first line (`massgen 0.1.91`), or an error naming the command and what it said. */
export async function massgenVersion(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<string> {
  const [executable, ...args] = argv;
  if (!executable) throw new Error('no MassGen command given');
  let proc: Awaited<ReturnType<typeof startInGroup>>;
  try {
    proc = await startInGroup({ executable, args: [...args, '--version'], cwd, env });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? `'${executable}' was not found on PATH: install MassGen (pip install massgen) or pass the command, e.g. --param massgen="uv run massgen"`
        : `'${argv.join(' ')} --version' could not start: ${(error as Error).message}`,
    );
  }
  let stdout = '';
  let stderr = '';
  proc.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  proc.child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const stop = () => void proc.stop(1000);
  const timer = setTimeout(stop, VERSION_TIMEOUT_MS);
  signal.addEventListener('abort', stop, { once: true });
  const { code } = await proc.exited.finally(() => {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  });
  const line = stdout.split('\n').find((l) => l.trim() !== '');
  if (code !== 0 || !line) {
    const said = (stderr.trim() || stdout.trim()).split('\n').slice(-5).join('\n');
    throw new Error(`'${argv.join(' ')} --version' exited ${code ?? 'on a signal'}${said ? `: ${said}` : ''}`);
  }
  return line.trim();
}
