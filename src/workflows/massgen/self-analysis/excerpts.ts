// The fixed, bounded excerpt pack each analyst gets besides the facts: every answer, vote and final
// answer of the turn, and the log lines that say something went wrong, each line numbered so a
// finding can cite `{file, lines}`. Bounds keep a prompt small whatever the run's size.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { TurnAnalysis } from '../analysis-model.ts';

export const PACK_LIMITS = {
  /** analysis.json, compact JSON. */
  factsChars: 60_000,
  answerChars: 4_000,
  finalAnswerChars: 8_000,
  voteChars: 2_000,
  /** Flagged log lines over all log files. */
  logLines: 80,
  logLineChars: 300,
  /** Files walked under the turn folder. */
  walkedFiles: 5_000,
} as const;

/** Log lines worth an analyst's reading: errors, warnings, denials, restarts, timeouts. */
const FLAGGED = /\b(ERROR|CRITICAL|WARNING|error|exception|traceback|denied|restart|timeout|timed out|retry)\b/i;

export interface ExcerptPack {
  /** The prompt text of the pack. */
  text: string;
  /** Line count of every file the turn holds (relative path, `/`-separated): what `{file, lines}` may cite. */
  fileLines: Map<string, number>;
}

function walk(dir: string, base: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  } catch {
    return;
  }
  for (const entry of entries) {
    if (out.length >= PACK_LIMITS.walkedFiles) return;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, base, out);
    else if (entry.isFile()) out.push(path.relative(base, full).split(path.sep).join('/'));
  }
}

function numbered(text: string, max: number): string {
  const clipped = text.length > max ? `${text.slice(0, max)}\n[... ${text.length - max} more characters not shown]` : text;
  return clipped
    .split('\n')
    .map((line, i) => `${String(i + 1).padStart(4)}| ${line}`)
    .join('\n');
}

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

function section(title: string, file: string, body: string): string {
  return `### ${title}: ${file}\n${body}\n`;
}

/**
 * The facts without what changes with the clock alone (when it was analyzed, the age of the last
 * activity): an unchanged turn then makes the same prompts, and a rerun is answered from the cache.
 */
function stableFacts(analysis: TurnAnalysis): unknown {
  const { analyzedAt: _analyzedAt, state, ...rest } = analysis;
  const { ageSeconds: _ageSeconds, ...stableState } = state;
  return { ...rest, state: stableState };
}

/** The pack for one turn; `root` is the turn folder (or the log folder of a legacy flat log). */
export function buildExcerptPack(root: string, analysis: TurnAnalysis): ExcerptPack {
  const files: string[] = [];
  walk(root, root, files);
  const fileLines = new Map<string, number>();
  const parts: string[] = [];
  const facts = JSON.stringify(stableFacts(analysis));
  parts.push(
    `## Facts (analysis.json; cite them by JSON pointer, e.g. /overview/votes)\n${facts.length > PACK_LIMITS.factsChars ? `${facts.slice(0, PACK_LIMITS.factsChars)} [... truncated]` : facts}\n`,
  );
  const answers: string[] = [];
  const finals: string[] = [];
  const votes: string[] = [];
  const logs: string[] = [];
  let flagged = 0;
  for (const file of files) {
    const name = path.posix.basename(file);
    const wanted = name === 'answer.txt' || name === 'vote.json' || name.endsWith('.log');
    if (!wanted) {
      fileLines.set(file, -1);
      continue;
    }
    let text: string;
    try {
      if (statSync(path.join(root, file)).size > 64 * 1024 * 1024) continue;
      text = readFileSync(path.join(root, file), 'utf8');
    } catch {
      continue;
    }
    fileLines.set(file, lineCount(text));
    if (name === 'answer.txt' && /(^|\/)final\//.test(file))
      finals.push(section('Final answer', file, numbered(text, PACK_LIMITS.finalAnswerChars)));
    else if (name === 'answer.txt') answers.push(section('Answer', file, numbered(text, PACK_LIMITS.answerChars)));
    else if (name === 'vote.json') votes.push(section('Vote', file, numbered(text, PACK_LIMITS.voteChars)));
    else {
      const lines = text.split('\n');
      const picked: string[] = [];
      for (let i = 0; i < lines.length && flagged < PACK_LIMITS.logLines; i++) {
        const line = lines[i] as string;
        if (!FLAGGED.test(line)) continue;
        flagged += 1;
        picked.push(
          `${file}:${i + 1}| ${line.length > PACK_LIMITS.logLineChars ? `${line.slice(0, PACK_LIMITS.logLineChars)} [...]` : line}`,
        );
      }
      if (picked.length > 0) logs.push(picked.join('\n'));
    }
  }
  parts.push(`## Final answer\n${finals.join('\n') || '(none in this turn)\n'}`);
  parts.push(`## Answers\n${answers.join('\n') || '(none in this turn)\n'}`);
  parts.push(`## Votes\n${votes.join('\n') || '(none in this turn)\n'}`);
  parts.push(`## Flagged log lines (file:line)\n${logs.join('\n') || '(none)'}\n`);
  // Other files may be cited too; their line counts are learnt when a finding cites them.
  return { text: parts.join('\n'), fileLines };
}

/** Line count of a file of the turn that the pack did not read (cited by a finding). */
export function countLines(root: string, file: string): number {
  return lineCount(readFileSync(path.join(root, file), 'utf8'));
}
