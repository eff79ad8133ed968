// zx enters the project here and nowhere else.
import { createRequire } from 'node:module';
import type { Shell as ZxShell } from 'zx';

export type Shell = ZxShell;

export interface ShellOptions {
  cwd: string;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

// zx loads on the first `$` a task asks for: most tasks never do, and loading it costs more
// than thousands of small stages. Its ES module wraps this same CommonJS build, so tasks that
// import zx themselves share its state.
const require = createRequire(import.meta.url);
let zx: typeof import('zx/core') | undefined;

/** A zx `$` whose commands run in `cwd`, are aborted by `signal` and never echo to the console. */
export function boundShell(options: ShellOptions): Shell {
  zx ??= require('zx/core') as typeof import('zx/core');
  return zx.$({
    cwd: options.cwd,
    signal: options.signal,
    env: options.env ?? process.env,
    verbose: false,
    quiet: true,
    detached: true,
  });
}
