// Everything a shareable bundle of one turn shows, read from the logs and redacted before it
// leaves this module: the analysis and its report, every answer's full text, every vote with its
// reason, the coordination timeline, and the MassGen config the run used.
import path from 'node:path';
import type { AnswerRecord, TurnAnalysis, VoteRecord } from './analysis-model.ts';
import { readTurnUnit } from './analyze.ts';
import { DEFAULT_STALE_AFTER_SECONDS } from './analysis-state.ts';
import { buildTurnAnalysis } from './build-analysis.ts';
import { configSecrets, maskConfigSecrets, type BundleRedactionKind, type BundleRedactor } from './bundle-redact.ts';
import { obj, str } from './coerce.ts';
import { listDir, readCapped } from './fs-safe.ts';
import type { RunData, TurnUnit } from './model.ts';
import { renderReport } from './render-report.ts';
import { parseYamlText } from './yaml-file.ts';
import { readLogText } from './log-text.ts';

const ANSWER_CAP = 512 * 1024;
const ANSWERS_TOTAL_CAP = 16 * 1024 * 1024;

export interface BundleAnswer {
  label: string;
  agentId: string;
  attempt: number;
  /** The snapshot folder's name (YYYYMMDD_HHMMSS_ffffff), or 'final'. */
  snapshot: string;
  final: boolean;
  text: string;
  chars: number;
  truncated: boolean;
}

export interface BundleData {
  kind: 'massgen-run-bundle';
  title: string;
  session: string;
  turn: number;
  generatedAt: string;
  question: string | null;
  state: string;
  winner: string | null;
  redaction: { enabled: boolean; counts: Partial<Record<BundleRedactionKind, number>>; total: number };
  /** ANALYSIS_REPORT.md, rendered from the redacted analysis. */
  report: string;
  answers: BundleAnswer[];
  votes: VoteRecord[];
  ignoredVotes: TurnAnalysis['ignoredVotes'];
  timeline: TurnAnalysis['coordinationFlow'];
  config: { path: string | null; massgenVersion: string | null; text: string | null };
  warnings: string[];
}

export interface BundleOptions {
  /**
   * The redactor, made once the run's own config secrets are known (they join the secret values);
   * null: --no-redact.
   */
  redactor(found: { secrets: string[]; runFolders: string[] }): BundleRedactor | null;
  nowMs?: number;
  staleAfterSeconds?: number;
  signal?: AbortSignal;
}

function labelOf(run: RunData, relDir: string, agentId: string, answers: AnswerRecord[], n: number): string {
  const mapped = run.mappings?.find((m) => m.path === `${relDir}/answer.txt` || m.path?.startsWith(`${relDir}/`))?.label;
  if (mapped) return mapped;
  const mine = answers.filter((a) => a.agentId === agentId && a.attempt === run.attempt);
  return mine[n]?.label ?? `${agentId} answer ${n + 1}`;
}

async function answersOf(runs: RunData[], unit: TurnUnit, analysis: TurnAnalysis, warnings: string[]): Promise<BundleAnswer[]> {
  const out: BundleAnswer[] = [];
  let budget = ANSWERS_TOTAL_CAP;
  const read = async (file: string): Promise<{ text: string; chars: number; truncated: boolean } | null> => {
    const cap = Math.max(0, Math.min(ANSWER_CAP, budget));
    const r = await readLogText(file, cap);
    if (!r.ok) return null;
    budget -= r.text.length;
    return { text: r.text, chars: r.bytes, truncated: r.truncated };
  };
  // Snapshot folders are named relative to the report dir; snapshot_mappings.json paths relative to the run dir.
  const base = unit.turnDir ?? unit.logDir;
  for (const run of runs) {
    const seen = new Map<string, number>();
    for (const s of [...run.snapshots].sort((a, b) => (a.timestamp < b.timestamp ? -1 : 1))) {
      if (s.kind !== 'answer') continue;
      const n = seen.get(s.agentId) ?? 0;
      seen.set(s.agentId, n + 1);
      const dir = path.join(base, s.relDir);
      const text = await read(path.join(dir, 'answer.txt'));
      if (!text) continue;
      const inRun = path.relative(run.dir, dir).split(path.sep).join('/');
      out.push({
        label: labelOf(run, inRun, s.agentId, analysis.answers, n),
        agentId: s.agentId,
        attempt: run.attempt,
        snapshot: s.timestamp,
        final: false,
        ...text,
      });
    }
    for (const agent of run.finalAgents) {
      const file = path.join(run.dir, 'final', agent, 'answer.txt');
      const turnFile = unit.turnDir ? path.join(unit.turnDir, 'final', agent, 'answer.txt') : null;
      const text = (await read(file)) ?? (turnFile ? await read(turnFile) : null);
      if (text) out.push({ label: 'final answer', agentId: agent, attempt: run.attempt, snapshot: 'final', final: true, ...text });
    }
  }
  if (budget <= 0) warnings.push(`answers hold more than ${ANSWERS_TOTAL_CAP} bytes: later ones are cut`);
  return out;
}

/**
 * The `config:` of the first attempt's execution_metadata.yaml that has one, and every attempt's
 * working_directory. The tree is read uncleaned: its secret-looking values are what the bundle
 * learns to redact everywhere; it is masked (maskConfigSecrets) and cleaned before it is shown.
 */
async function configOf(runs: RunData[]): Promise<{ tree: unknown; path: string | null; version: string | null; workingDirs: string[] }> {
  const workingDirs: string[] = [];
  let found: { tree: unknown; path: string | null; version: string | null } | null = null;
  for (const run of runs) {
    const file = (await listDir(run.dir)).find((e) => e.name === 'execution_metadata.yaml' && e.kind === 'file');
    if (!file) continue;
    const text = await readCapped(file.path, 2 * 1024 * 1024);
    if (!text.ok || text.truncated) continue;
    const parsed = parseYamlText(text.text, { uncleaned: true });
    const root = parsed.ok ? obj(parsed.value) : null;
    const wd = str(root?.working_directory);
    if (wd) workingDirs.push(wd);
    if (!found && root?.config !== undefined)
      found = {
        tree: root.config,
        path: str(root.config_path),
        version: str(root.massgen_version) ?? (typeof root.massgen_version === 'number' ? String(root.massgen_version) : null),
      };
  }
  return { ...(found ?? { tree: null, path: null, version: null }), workingDirs };
}

/** Reads, analyzes and redacts one turn for a bundle. */
export async function collectBundle(unit: TurnUnit, options: BundleOptions): Promise<BundleData> {
  const { runs, warnings } = await readTurnUnit(unit, { lines: options.signal ? { signal: options.signal } : {} });
  const analysis = buildTurnAnalysis({
    unit,
    runs,
    warnings,
    nowMs: options.nowMs ?? Date.now(),
    staleAfterSeconds: options.staleAfterSeconds ?? DEFAULT_STALE_AFTER_SECONDS,
  });
  const notes: string[] = [];
  const answers = await answersOf(runs, unit, analysis, notes);
  const config = await configOf(runs);
  const r = options.redactor({ secrets: configSecrets(config.tree), runFolders: config.workingDirs });
  const masked = r ? maskConfigSecrets(config.tree) : { value: config.tree, masked: 0 };
  // The masked values are counted when the config's text is cleaned (by their markers).
  const clean = <T>(v: T): T => (r ? r.deep(v) : v);
  const safeAnalysis = clean(analysis);
  const data: BundleData = {
    kind: 'massgen-run-bundle',
    title: `MassGen run ${safeAnalysis.source.session}, turn ${safeAnalysis.source.turn}`,
    session: safeAnalysis.source.session,
    turn: safeAnalysis.source.turn,
    generatedAt: new Date(options.nowMs ?? Date.now()).toISOString(),
    question: safeAnalysis.question,
    state: safeAnalysis.state.value,
    winner: safeAnalysis.winner.agentId,
    redaction: { enabled: r !== null, counts: {}, total: 0 },
    report: renderReport(safeAnalysis),
    answers: clean(answers),
    votes: safeAnalysis.votes,
    ignoredVotes: safeAnalysis.ignoredVotes,
    timeline: safeAnalysis.coordinationFlow,
    config: {
      path: config.path === null ? null : clean(config.path),
      massgenVersion: config.version,
      text: masked.value === null || masked.value === undefined ? null : clean(JSON.stringify(masked.value, null, 2)),
    },
    warnings: clean([...notes, ...safeAnalysis.warnings.map((w) => `${w.file}: ${w.message}`)]),
  };
  if (r) data.redaction = { enabled: true, counts: Object.fromEntries(Object.entries(r.counts).filter(([, n]) => n > 0)), total: r.total };
  return data;
}
