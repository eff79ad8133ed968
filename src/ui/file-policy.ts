// Which project files the dashboard's /files/ serves: refinery's own state under .refinery/ (run
// journals, caches, job registries with their tokens, audit logs, the dashboard's URL) is never
// served; under it only what a page links to: the artifacts of refine sessions
// (.refinery/sessions/<s>/…) and rejected artifacts with their errors.json (.refinery/rejected/…).
// Whatever is served still goes through the redactor (server.ts).

/** Folders inside a session that belong to a job registry (its records hold each job's auth_token). */
const REGISTRY_PARTS = new Set(['jobs', 'delegate_job_logs']);

/** Whether a root-relative path (checked segments, safe-path.ts) may be served raw-as-text. */
export function servedToPages(segments: readonly string[]): boolean {
  if (segments[0] !== '.refinery') return true;
  const area = segments[1];
  if (area === 'rejected') return segments.length > 2;
  if (area !== 'sessions') return false;
  return segments.slice(2).every((s) => !s.startsWith('.') && !REGISTRY_PARTS.has(s));
}
