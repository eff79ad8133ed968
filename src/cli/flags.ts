import os from 'node:os';
import type { CommandIo } from './command.ts';

/** Parses a command's argv; a bad flag is reported with the usage and gives undefined (exit 2). */
export function parseOrReport<T>(io: CommandIo, command: string, usage: string, parse: () => T): T | undefined {
  try {
    return parse();
  } catch (error) {
    io.stderr.write(`refinery ${command}: ${(error as Error).message}\n${usage}\n`);
    return undefined;
  }
}

/** `-j N`: the number of cores when absent; an error message when not a whole number ≥ 1. */
export function concurrencyFlag(raw: string | undefined): { value: number } | { error: string } {
  const value = raw === undefined ? os.availableParallelism() : Number(raw);
  return Number.isInteger(value) && value >= 1 ? { value } : { error: `-j ${raw}: expected a whole number ≥ 1` };
}

/** `-p KEY=VALUE` flags as a record; an error message for one without `=`. */
export function parseParamFlags(values: readonly string[]): { params: Record<string, string>; error?: string } {
  const params: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) return { params, error: `--param ${v}: expected key=value` };
    params[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return { params };
}
