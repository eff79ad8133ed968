import path from 'node:path';
import { z } from 'zod';

/** A session name: one folder name under `.refinery/sessions/` (no separators, no traversal). */
export const SESSION_NAME = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
    'a session name is 1-64 letters, digits, _ . - (starting with a letter or digit), e.g. readme-v2',
  )
  .refine((s) => !s.includes('..'), 'a session name must not contain ..');

export const DEFAULT_SESSIONS_DIR = '.refinery/sessions';

/** Where the refine pipeline writes one session's artifacts (paths relative to the session folder). */
export const sessionFiles = {
  criteria: 'criteria.json',
  criteriaUsage: 'criteria.usage.json',
  regression: 'regression.json',
  regressionUsage: 'regression.usage.json',
  summaryJson: 'summary.json',
  summaryMd: 'SUMMARY.md',
  round: (n: number) => `round_${String(n).padStart(3, '0')}`,
  roundFile: (
    n: number,
    file: 'consensus.json' | 'verdict.json' | 'critique_packet.md' | 'next_tasks.json' | 'usage.json' | 'worker.json',
  ) => `${sessionFiles.round(n)}/${file}`,
  judgeFile: (n: number, judge: string, file: 'verdict.json' | 'critique_packet.md' | 'next_tasks.json' | 'usage.json') =>
    `${sessionFiles.round(n)}/judges/${judge}/${file}`,
} as const;

export function sessionDir(sessionsDir: string, session: string): string {
  return path.posix.join(sessionsDir, session);
}
