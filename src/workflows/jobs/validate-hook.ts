import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import path from 'node:path';

export interface ValidationResult {
  passed: boolean;
  exitCode: number | null;
  /** Where the script's output went. */
  outputFile: string;
}

export class ValidateScriptError extends Error {}

/** Runs `bash SCRIPT` in the workdir with JOB_ID and REGISTRY_DIR set, as the seed's hook; exit 0 passes. */
export async function runValidation(input: {
  script: string;
  jobId: string;
  registryDir: string;
  workdir: string;
  outputFile: string;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}): Promise<ValidationResult> {
  const script = path.resolve(input.workdir, input.script);
  if (!existsSync(script)) throw new ValidateScriptError(`--validate: script ${script} does not exist`);
  const out = openSync(input.outputFile, 'a', 0o600);
  const child = spawn('bash', [script], {
    cwd: input.workdir,
    env: { ...process.env, ...input.env, JOB_ID: input.jobId, REGISTRY_DIR: input.registryDir },
    stdio: ['ignore', out, out],
    ...(input.signal ? { signal: input.signal } : {}),
  });
  closeSync(out);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', (error) => reject(new ValidateScriptError(`cannot run bash for --validate ${script}: ${error.message}`)));
    child.once('exit', (code) => resolve(code));
  });
  return { passed: exitCode === 0, exitCode, outputFile: input.outputFile };
}
