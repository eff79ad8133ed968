import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { didYouMean } from '../../engine/diagnostics/format.ts';
import { loadBackendsConfig } from './config-file.ts';
import type { BackendConfig } from './config-schema.ts';
import { BackendConfigError } from './errors.ts';
import { PRESETS } from './presets.ts';

/** Whether `program` (a path, or a name looked up on PATH) can be started. */
function findsProgram(program: string, root: string, env: NodeJS.ProcessEnv): boolean {
  const candidates = program.includes('/')
    ? [path.resolve(root, program)]
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((d) => path.join(d, program));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

function backendProblems(name: string, config: BackendConfig, root: string, env: NodeJS.ProcessEnv, file: string): string[] {
  switch (config.kind) {
    case 'openai':
      return config.api_key_env && !env[config.api_key_env]
        ? [`backend '${name}' reads its key from $${config.api_key_env}, which is not set; export it before the run`]
        : [];
    case 'command': {
      const executable = config.executable ?? (config.preset ? PRESETS[config.preset].executable : config.command?.[0]);
      if (!executable) return [`backend '${name}' in ${file} needs 'preset' or 'command' (an argument array)`];
      return findsProgram(executable, root, env)
        ? []
        : [
            `backend '${name}' runs '${executable}', which is not found${executable.includes('/') ? '' : ' on PATH'}; install it or set 'executable:' in ${file}`,
          ];
    }
    case 'replay':
      return existsSync(path.resolve(root, config.dir))
        ? []
        : [`backend '${name}' replays recordings from ${config.dir}, which does not exist`];
  }
}

/**
 * Every problem with the named backends that would stop a call, found before any stage runs,
 * so a run never pays for its first stages and then fails on its third: an unknown name, a key
 * variable that is not set, a program that is not installed, a missing recordings folder.
 */
export function checkBackends(
  root: string,
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  file = 'refinery.config.yaml',
): string[] {
  const wanted = [...new Set(names)].filter((n) => n !== '');
  if (wanted.length === 0) return [];
  let config;
  try {
    config = loadBackendsConfig(root, file);
  } catch (error) {
    if (error instanceof BackendConfigError) return [error.message];
    throw error;
  }
  const problems: string[] = [];
  for (const name of wanted) {
    const entry = config.backends[name];
    if (!entry) {
      const hint = didYouMean(name, Object.keys(config.backends));
      problems.push(
        `no backend named '${name}' in ${config.file}${hint ? `; did you mean '${hint}'?` : `; known: ${Object.keys(config.backends).join(', ') || 'none'}`}`,
      );
      continue;
    }
    problems.push(...backendProblems(name, entry, root, env, config.file));
  }
  return problems;
}
