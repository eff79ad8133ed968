import path from 'node:path';
import { PACKAGE_ROOT } from '../paths/package-root.ts';

// The runner program is python: its os.posix_spawn starts a command the way make does
// (vfork-like, with the child in a process group of its own), and it holds the jobserver
// (runner.py). It ships with the package's src/ and is found from the package root, so the
// compiled dist/ uses the same file. Where python cannot run it, the pool spawns each command
// from Node itself, with the same outcome.
export const RUNNER_FILE = path.join(PACKAGE_ROOT, 'src', 'engine', 'shell', 'runners', 'runner.py');

export interface RunnerProgram {
  command: string;
  args: string[];
}

/**
 * `-I -S`: isolated (no PYTHON* variables, no user site, not the script's folder on the path)
 * and without the site module: the runner needs the standard library only, and is ready sooner.
 */
const PYTHON_FLAGS = ['-I', '-S'];

export function pythonRunner(command: string, args: string[] = [...PYTHON_FLAGS, RUNNER_FILE]): RunnerProgram {
  return { command, args };
}

/**
 * For the test suite only: the interpreter the runners start with (empty: none, as on a machine
 * without python), so that a run's commands can be seen spawned directly from Node.
 */
export const TEST_PYTHON_VARIABLE = 'REFINERY_TEST_PYTHON';

/**
 * The pythons to try, in order. The system's first: a version manager's `python3` earlier in
 * PATH (a pyenv shim is a shell script) takes longer to start.
 */
export function machinePythons(env: NodeJS.ProcessEnv): RunnerProgram[] {
  const forced = env[TEST_PYTHON_VARIABLE];
  if (forced !== undefined) return forced === '' ? [] : [pythonRunner(forced)];
  return [pythonRunner('/usr/bin/python3'), pythonRunner('python3')];
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

  /** The program new runners start; null when none works here and commands are spawned directly. */
  current(): RunnerProgram | null {
    return this.candidates.find((p) => !this.ruledOut.has(p)) ?? null;
  }

  /** A runner of `program` answered a job. */
  worked(program: RunnerProgram): void {
    this.proven.add(program);
  }

  /** The program to try after a runner of `program` ended before it was ready; null: spawn directly. */
  failed(program: RunnerProgram): RunnerProgram | null {
    // A program that has run jobs here failed for a passing reason (out of processes or file
    // descriptors): it stays the choice, and only this job is spawned directly.
    if (this.proven.has(program)) return null;
    this.ruledOut.add(program);
    return this.current();
  }
}

/** This machine's runner programs, in order of preference; the verdict lasts for the process. */
export const MACHINE_RUNNER_PROGRAMS = new RunnerPrograms(machinePythons(process.env));
