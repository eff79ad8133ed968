import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, cpSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedOutput } from '../model/plan.ts';
import type { ArtifactIssue } from '../model/events.ts';
import type { SchemaRegistry } from './schema-registry.ts';

export interface StagedOutput {
  name: string;
  staging: string;
  target: ResolvedOutput;
}

/** Checks that every output was written and that each with a schema is valid. */
export function checkStagedOutputs(outputs: readonly StagedOutput[], schemas: SchemaRegistry): ArtifactIssue[] {
  const issues: ArtifactIssue[] = [];
  for (const o of outputs) {
    let isFile = false;
    try {
      isFile = statSync(o.staging).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) {
      issues.push({ output: o.name, path: o.target.path, pointer: '', message: `was not written; the stage must write it to its staging path (\${outputs.${o.name}} or ctx.outputs.${o.name})` });
      continue;
    }
    if (!o.target.schema) continue;
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(o.staging, 'utf8'));
    } catch (error) {
      issues.push({ output: o.name, path: o.target.path, pointer: '', message: `is not valid JSON: ${(error as Error).message}` });
      continue;
    }
    const result = schemas.validate(o.target.schema, data);
    if (!result.ok) {
      for (const issue of result.issues) issues.push({ output: o.name, path: o.target.path, pointer: issue.pointer, message: `${issue.message} (schema ${o.target.schema})` });
    }
  }
  return issues;
}

/** Moves a stage's staged files aside with the validation errors beside them; returns the folder. */
export function rejectOutputs(stagingDir: string, rejectedDir: string, issues: readonly ArtifactIssue[]): string {
  mkdirSync(path.dirname(rejectedDir), { recursive: true });
  rmSync(rejectedDir, { recursive: true, force: true });
  if (existsSync(stagingDir)) {
    try {
      renameSync(stagingDir, rejectedDir);
    } catch {
      cpSync(stagingDir, rejectedDir, { recursive: true });
    }
  } else mkdirSync(rejectedDir, { recursive: true });
  writeFileSync(path.join(rejectedDir, 'errors.json'), `${JSON.stringify(issues, null, 2)}\n`);
  return rejectedDir;
}

/** Renames each staged output over its target: readers see the old file or the new one, never half. */
export function publishOutputs(root: string, outputs: readonly StagedOutput[]): void {
  const made = new Set<string>();
  for (const o of outputs) {
    const target = path.join(root, o.target.path);
    const dir = path.dirname(target);
    if (!made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      made.add(dir);
    }
    renameSync(o.staging, target);
  }
}
