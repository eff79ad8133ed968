// The three analysts, in parallel: one schema call each through refine's machinery (askWithRepair:
// the per-call schema, one repair retry), then every finding checked against the facts.
import type { LlmClient } from '../../backends/llm-client.ts';
import { askWithRepair } from '../../refine/judge-call.ts';
import type { TurnAnalysis } from '../analysis-model.ts';
import { checkFindings, type UnverifiedFinding } from './evidence-check.ts';
import { countLines, type ExcerptPack } from './excerpts.ts';
import { FINDINGS_SCHEMA, type Finding, findingsReader } from './findings-schema.ts';
import { PERSPECTIVES, type Perspective } from './perspectives.ts';
import { analystPrompt } from './prompt.ts';

export interface AnalystResult {
  perspective: Perspective;
  backend: string;
  model: string;
  status: 'ok' | 'failed';
  /** Why the analyst failed (null when ok). */
  reason: string | null;
  findings: Finding[];
  unverified: UnverifiedFinding[];
}

/** Line counts of the cited files the pack did not read, so the check stays pure. */
function withCitedFiles(root: string, pack: ExcerptPack, findings: readonly Finding[]): Map<string, number> {
  const lines = new Map(pack.fileLines);
  for (const f of findings)
    for (const e of f.evidence)
      if ('file' in e && lines.get(e.file) === -1) {
        try {
          lines.set(e.file, countLines(root, e.file));
        } catch {
          lines.delete(e.file);
        }
      }
  for (const [file, count] of lines) if (count < 0) lines.delete(file);
  return lines;
}

async function runAnalyst(
  client: LlmClient,
  perspective: Perspective,
  backend: string,
  input: { root: string; analysis: TurnAnalysis; pack: ExcerptPack },
  signal: AbortSignal,
): Promise<AnalystResult> {
  const model = client.backend(backend).model;
  const answer = await askWithRepair(
    client,
    backend,
    {
      tag: `self-${perspective}`,
      prompt: analystPrompt(perspective, input.analysis.question, input.pack.text),
      jsonSchema: FINDINGS_SCHEMA,
      temperature: 0,
    },
    findingsReader,
    signal,
  );
  if (!answer.ok) return { perspective, backend, model, status: 'failed', reason: answer.reason, findings: [], unverified: [] };
  const checked = checkFindings(answer.value, input.analysis, withCitedFiles(input.root, input.pack, answer.value));
  return { perspective, backend, model, status: 'ok', reason: null, findings: checked.verified, unverified: checked.unverified };
}

/** Every analyst's result, in PERSPECTIVES order; configuration problems are thrown. */
export function runAnalysts(
  client: LlmClient,
  backends: Readonly<Record<Perspective, string>>,
  input: { root: string; analysis: TurnAnalysis; pack: ExcerptPack },
  signal: AbortSignal,
): Promise<AnalystResult[]> {
  return Promise.all(PERSPECTIVES.map((p) => runAnalyst(client, p, backends[p], input, signal)));
}
