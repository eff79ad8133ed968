// zx enters the project here and nowhere else.
import { $ as zx$, type Shell as ZxShell } from 'zx';

export type Shell = ZxShell;

export interface ShellOptions {
  cwd: string;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/** A zx `$` whose commands run in `cwd`, are aborted by `signal` and never echo to the console. */
export function boundShell(options: ShellOptions): Shell {
  return zx$({
    cwd: options.cwd,
    signal: options.signal,
    env: options.env ?? process.env,
    verbose: false,
    quiet: true,
    detached: true,
  });
}
