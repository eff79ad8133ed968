// The project's id, the same in every clone wherever it is checked out: `project:` in
// refinery.config.yaml, else the name in package.json. Never made from a path, which differs
// from machine to machine. Workers and coordinators of one project meet on topics named by it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseConfigYaml } from './config-yaml.ts';
import { PROJECT_ID } from '../dispatch/topics.ts';

const CONFIG = 'refinery.config.yaml';

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** An npm name as an id: `@team/app` becomes `team.app`. */
function fromPackageName(name: string): string {
  return name.replace(/^@/, '').replace('/', '.');
}

export function projectId(root: string): { id: string; source: string } | { error: string } {
  const text = readText(path.join(root, CONFIG));
  if (text !== undefined) {
    const parsed = parseConfigYaml(text, CONFIG);
    if (!parsed.ok) return { error: parsed.error };
    const value = (parsed.data as { project?: unknown } | null)?.project;
    if (value !== undefined && value !== null) {
      if (typeof value !== 'string' || !PROJECT_ID.test(value))
        return {
          error: `${CONFIG}: project: ${JSON.stringify(value)} is not a project id; use letters, digits, '.', '_' or '-' (it becomes an MQTT topic level)`,
        };
      return { id: value, source: `${CONFIG} project:` };
    }
  }
  const pkg = readText(path.join(root, 'package.json'));
  let name: unknown;
  try {
    name = pkg === undefined ? undefined : (JSON.parse(pkg) as { name?: unknown }).name;
  } catch {
    return { error: 'package.json is not valid JSON; fix it, or set `project: NAME` in refinery.config.yaml' };
  }
  if (typeof name === 'string') {
    const id = fromPackageName(name);
    if (PROJECT_ID.test(id)) return { id, source: 'package.json name' };
  }
  return {
    error: `no project id: set \`project: NAME\` in ${CONFIG} (the same in every clone; workers and the coordinator meet on topics named by it), or a name in package.json`,
  };
}
