import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { EvaluationFiles } from '../evaluation-files.ts';
import type { NextTasksArtifact } from '../next-tasks.ts';
import { resolveInside } from '../safe-path.ts';
import type { VerdictArtifact } from '../verdict.ts';

export interface JudgeInput {
  name: string;
  /** Backend to ask in voting rounds; undefined when the verdict does not say (the judge cannot vote). */
  backend?: string;
  verdictPath: string;
  status: 'ok' | 'degraded';
  reason?: string;
  /** The judge's round-1 evaluation, when usable. */
  files?: EvaluationFiles;
}

type Validate = (schema: string, data: unknown) => string | undefined;

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Reads each judge's verdict.json and its siblings (critique_packet.md, next_tasks.json, or the given
 * paths). A judge whose verdict is degraded, invalid or missing, or whose packet is missing or empty,
 * has no answer (the spec's degraded status) but keeps its seat.
 */
export function readJudgeInputs(
  root: string,
  verdictPaths: readonly string[],
  validate: Validate,
  overrides: { critiques?: readonly string[]; nextTasks?: readonly string[] } = {},
): JudgeInput[] {
  const names = new Set<string>();
  return verdictPaths.map((given, i) => {
    const file = resolveInside(root, given, 'verdict path');
    const dir = path.dirname(file);
    const packetFile = overrides.critiques?.[i]
      ? resolveInside(root, overrides.critiques[i], 'critique path')
      : path.join(dir, 'critique_packet.md');
    const tasksFile = overrides.nextTasks?.[i]
      ? resolveInside(root, overrides.nextTasks[i], 'next_tasks path')
      : path.join(dir, 'next_tasks.json');
    const base = { verdictPath: given };
    let verdict: VerdictArtifact | undefined;
    let problem: string | undefined;
    try {
      const data = readJson(file);
      problem = validate('verdict', data);
      if (!problem) verdict = data as VerdictArtifact;
    } catch (error) {
      problem = existsSync(file) ? `unreadable (${(error as Error).message})` : 'missing';
    }
    let name = verdict?.judge?.backend ?? path.basename(dir);
    for (let n = 2; names.has(name); n++) name = `${verdict?.judge?.backend ?? path.basename(dir)}#${n}`;
    names.add(name);
    const backend = verdict?.judge?.backend;
    if (!verdict) return { ...base, name, status: 'degraded', reason: `verdict.json ${problem}` };
    if (verdict.status === 'degraded') return { ...base, name, backend, status: 'degraded', reason: verdict.degraded_reason ?? 'degraded' };
    const packet = existsSync(packetFile) ? readFileSync(packetFile, 'utf8') : '';
    if (packet.trim() === '') return { ...base, name, backend, status: 'degraded', reason: 'critique_packet.md is missing or empty' };
    let nextTasks: NextTasksArtifact = { schema_version: '2', status: 'degraded', reason: 'next_tasks.json is missing or invalid' };
    try {
      const data = readJson(tasksFile);
      if (!validate('next-tasks', data)) nextTasks = data as NextTasksArtifact;
    } catch {
      // keep the degraded placeholder
    }
    return { ...base, name, backend, status: 'ok', files: { verdict, packet, nextTasks } };
  });
}
