import path from 'node:path';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

// Python's os.posix_spawn starts a command the way make does (vfork-like, with the child in a
// process group of its own): the runner of a run with many commands. Perl (in every Debian base
// system) is ready in a few milliseconds where python takes 15 or more, so it runs the commands
// of a small run (an edit's few stages), and is the fallback where python is missing; it sets the
// group between fork and exec, which sh cannot do without an extra `setsid` exec. The programs
// and their protocols are in runners/; they ship with the package's src/ and are found from the
// package root, so the compiled dist/ uses the same files.
const RUNNERS = path.join(PACKAGE_ROOT, 'src', 'engine', 'shell', 'runners');
export const PYTHON_RUNNER_FILE = path.join(RUNNERS, 'runner.py');
export const PERL_RUNNER_FILE = path.join(RUNNERS, 'runner.pl');

export interface RunnerProgram {
  command: string;
  args: string[];
  /** python reads JSON jobs; perl takes `c`/`f`/`d` lines. Both start simple commands without a shell. */
  protocol: 'json' | 'lines';
  /**
   * Ready in a few milliseconds (perl: ~4 ms here) rather than 15 or more (python), but each
   * command costs a little more (a fork of perl, where python's posix_spawn is vfork-like):
   * the choice for a run with few commands.
   */
  startsQuickly: boolean;
  /** Takes the jobserver arguments (runner.py): its runners may hold a job that waits for a token. */
  jobserver: boolean;
}

/**
 * `-I -S`: isolated (no PYTHON* variables, no user site, not the script's folder on the path)
 * and without the site module: the runner needs the standard library only, and is ready in
 * ~14 ms here instead of ~20.
 */
const PYTHON_FLAGS = ['-I', '-S'];

export function pythonRunner(command: string, args: string[] = [...PYTHON_FLAGS, PYTHON_RUNNER_FILE]): RunnerProgram {
  return { command, args, protocol: 'json', startsQuickly: false, jobserver: true };
}

export function perlRunner(command: string): RunnerProgram {
  return { command, args: [PERL_RUNNER_FILE], protocol: 'lines', startsQuickly: true, jobserver: false };
}

/**
 * Which runner program new runners start, learnt from the runners themselves rather than
 * from a probe beforehand: a synchronous probe blocked the event loop on the way to the
 * first command, and started python once more. A runner says `ready` before it reads a job;
 * one that ends before that (its program is missing, or python lacks posix_spawn) rules its
 * program out for the rest of the process, and the job it was sent goes to the next program.
 */
export class RunnerPrograms {
  private readonly ruledOut = new Set<RunnerProgram>();
  private readonly proven = new Set<RunnerProgram>();

  constructor(private readonly candidates: readonly RunnerProgram[]) {}

  /**
   * The program new runners start; null when none works here and commands are spawned directly.
   * `quickStart`: the first that starts quickly, where one is left.
   */
  current(quickStart = false): RunnerProgram | null {
    const left = this.candidates.filter((p) => !this.ruledOut.has(p));
    return (quickStart ? left.find((p) => p.startsQuickly) : undefined) ?? left[0] ?? null;
  }

  /** A runner of `program` answered a job. */
  worked(program: RunnerProgram): void {
    this.proven.add(program);
  }

  /** The program to try after a runner of `program` ended before it was ready; null: spawn directly. */
  failed(program: RunnerProgram, quickStart = false): RunnerProgram | null {
    // A program that has run jobs here failed for a passing reason (out of processes or file
    // descriptors): it stays the choice, and only this job is spawned directly.
    if (this.proven.has(program)) return null;
    this.ruledOut.add(program);
    return this.current(quickStart);
  }
}

/** This machine's runner programs, in order of preference; the verdict lasts for the process. */
export const MACHINE_RUNNER_PROGRAMS = new RunnerPrograms([pythonRunner('/usr/bin/python3'), pythonRunner('python3'), perlRunner('perl')]);
