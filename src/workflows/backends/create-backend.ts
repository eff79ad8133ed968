import { CommandBackend } from './command-backend.ts';
import { OpenAiBackend } from './openai-backend.ts';
import { ReplayBackend } from './replay-backend.ts';
import type { BackendConfig } from './config-schema.ts';
import type { Backend } from './types.ts';

export const DEFAULT_CONCURRENCY: Readonly<Record<BackendConfig['kind'], number>> = { command: 2, openai: 4, replay: 8 };

/** Builds the backend of one config entry; `root` is the project root (cwd of commands, base of replay dirs). */
export function createBackend(name: string, config: BackendConfig, root: string, env: NodeJS.ProcessEnv = process.env): Backend {
  switch (config.kind) {
    case 'command':
      return new CommandBackend(name, config, root, env);
    case 'openai':
      return new OpenAiBackend(name, config, env);
    case 'replay':
      return new ReplayBackend(name, config, root);
  }
}
