import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { Diagnostic } from '../types/source.ts';
import type { PipelineSpec } from '../types/pipeline.ts';
import { didYouMean } from '../diagnostics/format.ts';
import { Locator } from './locate.ts';
import { allowedKeysAt, pipelineSchema, stageSchema, type RawPipeline, type RawStage } from './pipeline-schema.ts';
import { parseLocatedYaml } from './yaml-source.ts';
import { toSpec } from './to-spec.ts';
import { checkPipeline, type NameResolver } from './check.ts';
import { salvage } from './salvage.ts';

export interface LoadResult {
  spec?: PipelineSpec;
  diagnostics: Diagnostic[];
  /** The file's text, for showing source lines in messages. */
  text: string;
}

function describeIssue(issue: z.core.$ZodIssue, locator: Locator, raw: unknown, prefix: string[] = []): void {
  const where = [...prefix, ...issue.path.map(String)];
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeysAt([...prefix, ...issue.path.map(String)]);
    for (const key of issue.keys) {
      const hint = didYouMean(key, allowed);
      locator.error('unknown-key', [...where, key], `unknown key '${key}'${hint ? `; did you mean '${hint}'?` : ''}`, {
        which: 'key',
        notes: [`allowed here: ${allowed.join(', ')}`],
      });
    }
    return;
  }
  let present = raw as unknown;
  for (const p of [...prefix, ...issue.path]) present = (present as Record<PropertyKey, unknown> | undefined)?.[p as string];
  const label = where.length ? where.join('.') : 'pipeline file';
  const required = issue.code === 'invalid_type' && present === undefined;
  const message = required ? `'${where[where.length - 1]}' is required` : issue.message;
  locator.error(required ? 'missing-key' : 'invalid-value', where, `${label}: ${message}`, {
    which: present === undefined ? 'key' : 'value',
  });
}

/** The pipeline file's identity: sha256 of its text, hex. */
export function pipelineTextHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Parses, validates and checks one pipeline file; every problem is reported at once. */
export function loadPipelineText(file: string, text: string, resolver: NameResolver): LoadResult {
  const yaml = parseLocatedYaml(file, text);
  const locator = new Locator(file, text, yaml);
  if (yaml.diagnostics.some((d) => d.severity === 'error')) return { diagnostics: yaml.diagnostics, text };
  if (yaml.value === null || typeof yaml.value !== 'object' || Array.isArray(yaml.value)) {
    locator.error('not-a-mapping', [], 'a pipeline file must be a mapping with `pipeline:` and `stages:`');
    return { diagnostics: locator.diagnostics, text };
  }
  const parsed = pipelineSchema.safeParse(yaml.value);
  if (!parsed.success) for (const issue of parsed.error.issues) describeIssue(issue, locator, yaml.value);
  // What is left once the reported fields are dropped is still checked, so one pass reports all.
  const top = parsed.success ? parsed.data : salvage(pipelineSchema, yaml.value);
  if (!top) return { diagnostics: locator.diagnostics, text };
  // Each stage is checked on its own, so one bad stage does not hide the others' problems.
  const stages: Record<string, RawStage> = {};
  for (const [id, rawStage] of Object.entries(top.stages)) {
    const stage = stageSchema.safeParse(rawStage);
    if (stage.success) {
      stages[id] = stage.data;
      continue;
    }
    for (const issue of stage.error.issues) describeIssue(issue, locator, yaml.value, ['stages', id]);
    const partial = salvage(stageSchema, rawStage);
    // A stage whose task/run/loop was dropped would only add a misleading "needs a task" error.
    if (partial && (partial.task ?? partial.run ?? partial.loop) !== undefined) stages[id] = partial;
  }
  const spec = toSpec({ ...top, stages } as RawPipeline, locator, pipelineTextHash(text));
  checkPipeline(spec, locator, resolver, Object.keys(top.stages));
  const errors = locator.diagnostics.some((d) => d.severity === 'error');
  return { ...(errors ? {} : { spec }), diagnostics: locator.diagnostics, text };
}
