import type { EventSink } from '../engine/events/bus.ts';
import { consoleSink } from '../engine/events/console-sink.ts';
import type { CommandIo } from './command.ts';

/**
 * Where a run's events show in the terminal: JSON lines with `--json`, else the console view,
 * redrawn in place on a TTY outside CI, in colour unless NO_COLOR is set.
 */
export function terminalSink(io: CommandIo, flags: { json: boolean; verbose: boolean }): EventSink {
  if (flags.json) return (e) => io.stdout.write(`${JSON.stringify(e)}\n`);
  const live = Boolean(io.stdout.isTTY) && !io.env.CI;
  return consoleSink({
    out: io.stdout,
    live,
    color: live && io.env.NO_COLOR === undefined,
    verbose: flags.verbose,
    ...(io.stdout.columns ? { columns: io.stdout.columns } : {}),
  });
}
