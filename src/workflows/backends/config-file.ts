// The `yaml` package enters the backends here and nowhere else.
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { z } from 'zod';
import { parseConfigYaml } from '../../engine/config/config-yaml.ts';
import { BackendConfigError } from './errors.ts';
import { SECRET_KEY_NAMES, configFileSchema, type BackendsConfig } from './config-schema.ts';

function located(file: string, doc: ReturnType<typeof parseDocument>, counter: LineCounter, at: readonly PropertyKey[]): string {
  for (let depth = at.length; depth >= 0; depth--) {
    const node = doc.getIn(at.slice(0, depth) as unknown[], true);
    if (isNode(node) && node.range) {
      const pos = counter.linePos(node.range[0]);
      return `${file}:${pos.line}:${pos.col}`;
    }
  }
  return file;
}

function secretHint(data: unknown, file: string): string | undefined {
  const backends = (data as { backends?: Record<string, Record<string, unknown>> } | null)?.backends;
  if (!backends || typeof backends !== 'object') return undefined;
  for (const [name, entry] of Object.entries(backends)) {
    if (!entry || typeof entry !== 'object') continue;
    const key = Object.keys(entry).find((k) => (SECRET_KEY_NAMES as readonly string[]).includes(k.toLowerCase()));
    if (key)
      return `${file}: backends.${name}.${key}: secrets are never read from the config file; export the key in an environment variable and name it with 'api_key_env: VAR_NAME'`;
  }
  return undefined;
}

function describeIssues(file: string, text: string, issues: z.core.$ZodIssue[]): string {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter });
  return issues
    .map((issue) => `${located(file, doc, counter, issue.path)} ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('\n');
}

/** Parses and validates backends config text; throws BackendConfigError naming file:line:col and the fix. */
export function parseBackendsConfig(text: string, file = '<inline>'): BackendsConfig {
  const read = parseConfigYaml(text, file);
  if (!read.ok) throw new BackendConfigError(read.error);
  const data = read.data;
  const secret = secretHint(data, file);
  if (secret) throw new BackendConfigError(secret);
  const parsed = configFileSchema.safeParse(data ?? {});
  if (!parsed.success) throw new BackendConfigError(`invalid backend config:\n${describeIssues(file, text, parsed.error.issues)}`);
  return { file, backends: parsed.data.backends };
}

/** Loads `refinery.config.yaml` (or the given file) relative to the project root. */
export function loadBackendsConfig(root: string, file = 'refinery.config.yaml'): BackendsConfig {
  const absolute = path.resolve(root, file);
  if (!existsSync(absolute))
    throw new BackendConfigError(
      `${file}: not found under ${root}; create it with a 'backends:' map (see refinery.config.yaml in the refinery repository)`,
    );
  return parseBackendsConfig(readFileSync(absolute, 'utf8'), path.relative(root, absolute) || file);
}
