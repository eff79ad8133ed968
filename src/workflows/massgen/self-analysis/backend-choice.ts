// Which backends the analysts use: --backends, else `self_analysis.backends` in the backends file,
// else its first OpenAI-compatible backend. A MassGen config given as --config is named as such.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfigYaml } from '../../../engine/config/config-yaml.ts';
import type { BackendsConfig } from '../../backends/config-schema.ts';

export type BackendChoice = { ok: true; names: string[]; from: string } | { ok: false; error: string };

/** How the user gives the backends and the backends file: the CLI's flags, or the self-analysis pipeline's params. */
export interface ChoiceWords {
  backends: string;
  config: string;
}

export const CLI_WORDS: ChoiceWords = { backends: '--backends', config: '--config' };
export const PIPELINE_WORDS: ChoiceWords = { backends: '--param backends=', config: '--param config=' };

/** `--backends NAMES` or `--param backends=NAMES`. */
const usage = (word: string, value: string): string => (word.endsWith('=') ? `${word}${value}` : `${word} ${value}`);
const bare = (word: string): string => word.replace(/=$/, '');

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A MassGen config (`agents:` or `agent:` with a `backend:`, no `backends:`) passed where refinery's
 * backends file is expected: the fix, instead of a schema error about a missing `backends:` key.
 */
export function massgenConfigProblem(root: string, file: string, words: ChoiceWords = CLI_WORDS): string | undefined {
  let text: string;
  try {
    text = readFileSync(path.resolve(root, file), 'utf8');
  } catch {
    return undefined;
  }
  const read = parseConfigYaml(text, file);
  if (!read.ok || !isObject(read.data) || 'backends' in read.data) return undefined;
  if (!('agents' in read.data) && !('agent' in read.data)) return undefined;
  return `${file} is a MassGen config (it has 'agent(s):', no 'backends:'); ${bare(words.config)} takes refinery's backends file. Add each agent's backend (type and model) as a named backend under 'backends:' there and pass ${usage(words.backends, 'NAMES')} (see docs/self-analysis.md)`;
}

/** The `self_analysis.backends` list of the backends file, when it has one. */
function configuredList(root: string, file: string): string[] | string | undefined {
  const read = parseConfigYaml(readFileSync(path.resolve(root, file), 'utf8'), file);
  if (!read.ok || !isObject(read.data)) return undefined;
  const section = read.data.self_analysis;
  if (section === undefined) return undefined;
  const list = isObject(section) ? section.backends : undefined;
  if (!Array.isArray(list) || list.length === 0 || !list.every((n) => typeof n === 'string' && n !== ''))
    return `${file}: self_analysis.backends must be a non-empty list of backend names, e.g. self_analysis: { backends: [openai] }`;
  return list as string[];
}

export function chooseBackends(
  root: string,
  config: BackendsConfig,
  given: string | undefined,
  words: ChoiceWords = CLI_WORDS,
): BackendChoice {
  if (given !== undefined) {
    const names = given.split(',').map((n) => n.trim());
    if (names.some((n) => n === '')) return { ok: false, error: `${bare(words.backends)} takes names separated by commas, got '${given}'` };
    return { ok: true, names, from: bare(words.backends) };
  }
  const listed = configuredList(root, config.file);
  if (typeof listed === 'string') return { ok: false, error: listed };
  if (listed) return { ok: true, names: listed, from: `${config.file} self_analysis.backends` };
  const first = Object.entries(config.backends).find(([, b]) => b.kind === 'openai')?.[0];
  if (!first)
    return {
      ok: false,
      error: `${config.file} has no OpenAI-compatible backend and no self_analysis.backends list; pass ${usage(words.backends, 'NAMES')} or add self_analysis: { backends: [NAME] }`,
    };
  return { ok: true, names: [first], from: `the first OpenAI-compatible backend of ${config.file}` };
}
