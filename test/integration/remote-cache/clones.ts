// Clones of one project in different folders, for the remote-cache tests: the analyze example
// (the bundled MassGen logs) and the offline refine example (recorded judges).
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { events, REPO_ROOT, runCli, tempProject, type CliResult, type TempProject } from '../../helpers/project.ts';
import { EXAMPLE_REFINE_PARAMS } from '../../helpers/refine-example.ts';

export function exampleClone(files: Record<string, string> = {}): TempProject {
  const p = tempProject(files);
  for (const rel of ['refinery.config.yaml', 'pipelines/refine.yaml', 'examples/refine'])
    cpSync(path.join(REPO_ROOT, rel), p.path(rel), { recursive: true });
  cpSync(path.join(REPO_ROOT, 'examples/massgen_logs'), p.path('.massgen/massgen_logs'), { recursive: true });
  return p;
}

export function runAnalyze(p: TempProject, env: NodeJS.ProcessEnv = {}, ...args: string[]): Promise<CliResult> {
  return runCli(['run', 'analyze', '--json', ...args], { cwd: p.root, env });
}

export function runRefine(p: TempProject, env: NodeJS.ProcessEnv = {}, ...args: string[]): Promise<CliResult> {
  return runCli(['run', 'refine', ...EXAMPLE_REFINE_PARAMS, '--json', ...args], { cwd: p.root, env });
}

/** Stage id -> fingerprint, as the journal recorded them. */
export function fingerprints(p: TempProject, pipeline: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(p.path(`.refinery/state/${pipeline}.jsonl`), 'utf8').split('\n')) {
    if (!line) continue;
    const entry = JSON.parse(line) as { s: string; f: string | null };
    if (entry.f === null) delete out[entry.s];
    else out[entry.s] = entry.f;
  }
  return out;
}

/** The LLM response cache's keys (its file names). */
export function llmCacheKeys(p: TempProject): string[] {
  try {
    return readdirSync(p.path('.refinery/cache/llm'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.basename(f, '.json'))
      .sort();
  } catch {
    return [];
  }
}

/** Path -> content of every output the run's succeeded stages published. */
export function artifacts(p: TempProject, ...results: CliResult[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of results) {
    for (const e of events(r.stdout)) {
      if (e.type !== 'stage-end' || e.status !== 'succeeded') continue;
      for (const rel of Object.values(e.outputs as Record<string, string>)) out[rel] = readFileSync(p.path(rel), 'utf8');
    }
  }
  return out;
}

export function stageStarts(r: CliResult): string[] {
  return events(r.stdout)
    .filter((e) => e.type === 'stage-start')
    .map((e) => e.stage as string);
}

/** Model calls that were made (not answered from a cache). */
export function modelCalls(r: CliResult): number {
  return events(r.stdout).filter(
    (e) =>
      e.type === 'stage-report' &&
      (e.report as { kind: string; cached?: boolean }).kind === 'llm-call' &&
      !(e.report as { cached: boolean }).cached,
  ).length;
}

export function warnings(r: CliResult): string[] {
  return events(r.stdout)
    .filter((e) => e.type === 'stage-report' && (e.report as { kind: string }).kind === 'warning')
    .map((e) => (e.report as { message: string }).message);
}

export function runEnd(r: CliResult): Record<string, unknown> {
  return events(r.stdout).find((e) => e.type === 'run-end') as Record<string, unknown>;
}
