// A refine session's files on disk, each checked against the schema of its kind.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SchemaRegistry } from '../../../../src/engine/artifacts/schema-registry.ts';
import { REPO_ROOT } from '../../../helpers/project.ts';

const registry = new SchemaRegistry(REPO_ROOT);

const SCHEMA_OF: Array<[RegExp, string]> = [
  [/(^|\/)criteria\.json$/, 'eval-criteria'],
  [/usage\.json$/, 'llm-usage'],
  [/(^|\/)regression\.json$/, 'regression'],
  [/(^|\/)consensus\.json$/, 'consensus'],
  [/(^|\/)verdict\.json$/, 'verdict'],
  [/(^|\/)next_tasks\.json$/, 'next-tasks'],
  [/(^|\/)worker\.json$/, 'job-record'],
  [/(^|\/)summary\.json$/, 'refine-summary'],
];

export function readJson<T = Record<string, any>>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Every file under `dir`, as paths relative to it with / separators. */
export function sessionFileList(dir: string): string[] {
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  return walk(dir).map((f) => path.relative(dir, f).split(path.sep).join('/'));
}

/** Every JSON artifact of the session (the worker's job registry and logs aside) that fails its schema: [file, problems]. */
export function invalidArtifacts(sessionDir: string): Array<[string, string]> {
  const bad: Array<[string, string]> = [];
  for (const file of sessionFileList(sessionDir)) {
    if (!file.endsWith('.json') || file.startsWith('worker/')) continue;
    const schema = SCHEMA_OF.find(([re]) => re.test(file))?.[1];
    if (!schema) {
      bad.push([file, 'no schema known for this file']);
      continue;
    }
    const result = registry.validate(schema, readJson(path.join(sessionDir, file)));
    if (!result.ok) bad.push([file, result.issues.map((i) => `${i.pointer} ${i.message}`).join('; ')]);
  }
  return bad;
}
