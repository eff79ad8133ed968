import { PassThrough } from 'node:stream';
import type { CommandIo } from '../../src/cli/command.ts';

/** An in-memory CommandIo for calling a command module directly. */
export function memoryIo(
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): { io: CommandIo; out: () => string; err: () => string; abort: () => void } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const controller = new AbortController();
  return {
    io: {
      stdout,
      stderr,
      cwd,
      env: { PATH: process.env.PATH, ...env },
      signal: controller.signal,
      forceSignal: new AbortController().signal,
    },
    out: () => out,
    err: () => err,
    abort: () => controller.abort(),
  };
}
