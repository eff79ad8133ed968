import { existsSync } from 'node:fs';
import path from 'node:path';
import { COMMANDS } from './commands.ts';
import { directoryProblem, findProjectRoot } from './project-root.ts';
import type { CommandIo } from './command.ts';
import { terminalStream } from './terminal-text.ts';
import { describeFsError, isFsError } from '../engine/state/write-problem.ts';

const ENVIRONMENT_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EIO', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE']);

const VERSION = '0.1.0';

function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'refinery: make for multi-agent LLM work',
    '',
    'Usage: refinery [-C DIR] <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Global options:',
    '  -C, --directory DIR  run as if started in DIR (the project root)',
    '  -h, --help           show help (refinery <command> --help for a command)',
    '  -V, --version        print the version',
    '',
  ].join('\n');
}

/** Splits `-C DIR` off the front, so every command sees the project root as its cwd. */
function takeDirectory(argv: string[], cwd: string): { argv: string[]; cwd: string } {
  const rest = [...argv];
  let dir = cwd;
  if (rest[0] !== '-C' && rest[0] !== '--directory' && !rest[0]?.startsWith('--directory='))
    return { argv: rest, cwd: findProjectRoot(cwd) };
  while (rest[0] === '-C' || rest[0] === '--directory' || rest[0]?.startsWith('--directory=')) {
    const flag = rest.shift() as string;
    const value = flag.includes('=') ? flag.slice(flag.indexOf('=') + 1) : rest.shift();
    if (value === undefined) throw new Error('-C needs a directory');
    dir = path.resolve(dir, value);
    const problem = directoryProblem(dir);
    if (problem) throw new Error(`-C ${value}: ${problem}`);
  }
  return { argv: rest, cwd: dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir };
}

/**
 * A global option given after the command (`refinery status -C DIR`), which no command takes:
 * named with where it goes, rather than left to the command's "unknown option". Arguments after
 * `--` belong to what the command starts.
 */
function misplacedGlobal(args: readonly string[]): string | undefined {
  for (const arg of args) {
    if (arg === '--') return undefined;
    if (arg === '-C' || arg === '--directory' || arg.startsWith('--directory='))
      return `${arg.split('=')[0]} is an option of refinery itself: give it before the command (refinery -C DIR <command> ...)`;
    if (arg === '-V' || arg === '--version') return `${arg} is an option of refinery itself: it prints the version alone (refinery ${arg})`;
  }
  return undefined;
}

/** An unknown command, with the nearest known one or the list (the diagnostics module is loaded only then). */
async function unknownCommand(name: string): Promise<string> {
  const { didYouMean } = await import('../engine/diagnostics/format.ts');
  const hint = didYouMean(name, Object.keys(COMMANDS));
  const choices = hint ? `did you mean '${hint}'?` : `the commands are: ${Object.keys(COMMANDS).join(', ')}`;
  return `unknown command '${name}'; ${choices} (refinery --help describes each)`;
}

function quietOnClosedPipe(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') throw error;
}

const DAEMON_COMMANDS = new Set(['run', 'plan', 'status']);

function isDaemonCommand(name: string): name is 'run' | 'plan' | 'status' {
  return DAEMON_COMMANDS.has(name);
}

/** The exit code when a running `refinery watch` ran the command; undefined to run it here. */
async function viaDaemon(
  name: 'run' | 'plan' | 'status',
  argv: string[],
  root: string,
  signal: AbortSignal,
  forceSignal: AbortSignal,
): Promise<number | undefined> {
  // A file check first: without a daemon, nothing more is loaded.
  if (!existsSync(path.join(root, '.refinery', 'watch', 'sock'))) return undefined;
  const { askDaemon } = await import('./daemon/ask.ts');
  const answer = await askDaemon(root, name, argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal,
    forceSignal,
  });
  return 'exit' in answer ? answer.exit : undefined;
}

export async function main(rawArgv: string[]): Promise<number> {
  const controller = new AbortController();
  const force = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupts += 1;
    if (interrupts === 1) controller.abort(signal);
    else if (interrupts === 2) force.abort(signal);
    else process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // A reader that went away (`refinery run -v | head -1`) ends the output, not the run.
  process.stdout.on('error', quietOnClosedPipe);
  process.stderr.on('error', quietOnClosedPipe);
  // Everything a command prints goes through here; a watch daemon's client prints what the daemon
  // already passed through it (see daemon/serve.ts).
  const stdout = terminalStream(process.stdout);
  const stderr = terminalStream(process.stderr);
  try {
    let parsed: { argv: string[]; cwd: string };
    try {
      parsed = takeDirectory(rawArgv, process.cwd());
    } catch (error) {
      stderr.write(`refinery: ${(error as Error).message}\n`);
      return 2;
    }
    const [name, ...rest] = parsed.argv;
    if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
      stdout.write(helpText());
      return name === undefined ? 2 : 0;
    }
    if (name === '-V' || name === '--version') {
      stdout.write(`${VERSION}\n`);
      return 0;
    }
    const entry = COMMANDS[name];
    if (!entry) {
      stderr.write(`refinery: ${await unknownCommand(name)}\n`);
      return 2;
    }
    const misplaced = misplacedGlobal(rest);
    if (misplaced) {
      stderr.write(`refinery ${name}: ${misplaced}\n`);
      return 2;
    }
    const help = rest.includes('-h') || rest.includes('--help');
    if (!help && isDaemonCommand(name) && process.env.REFINERY_NO_DAEMON === undefined) {
      const answer = await viaDaemon(name, rest, parsed.cwd, controller.signal, force.signal);
      if (answer !== undefined) return answer;
    }
    const command = await entry.load();
    if (help) {
      stdout.write(`${command.usage}\n`);
      return 0;
    }
    const io: CommandIo = {
      stdout,
      stderr,
      cwd: parsed.cwd,
      env: process.env,
      signal: controller.signal,
      forceSignal: force.signal,
    };
    try {
      return await command.run(rest, io);
    } catch (error) {
      // The machine's trouble (a full disk, a read-only folder), not a bug: one line, no stack.
      if (!isFsError(error) || !ENVIRONMENT_ERRORS.has(error.code as string)) throw error;
      io.stderr.write(`refinery: error: ${describeFsError(error, parsed.cwd)}\n`);
      return 1;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
