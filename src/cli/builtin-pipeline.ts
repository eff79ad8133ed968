// An error about a pipeline refinery ships (node_modules/refinery/pipelines/analyze.yaml) is about
// what the user passed, not about a file they do not own and should not edit.
import path from 'node:path';
import { PACKAGE_ROOT } from '../engine/paths/package-root.ts';
import type { Diagnostic, ParamPathCause } from '../engine/types/source.ts';

/** A pipeline from refinery's own package, run from a project other than refinery's own clone. */
export function isBuiltinPipeline(file: string, projectRoot: string): boolean {
  const inside = (dir: string): boolean => file.startsWith(`${dir}${path.sep}`);
  return inside(path.join(PACKAGE_ROOT, 'pipelines')) && !inside(projectRoot);
}

/** `--param logs=/tmp/nope: no such folder`, or for a default: `param logs (default '…'): …; pass …`. */
function paramMessage(cause: ParamPathCause, passed: Readonly<Record<string, string>>, root: string): string {
  const names = Object.keys(cause.params);
  const shown = names
    .map((n) => (passed[n] !== undefined ? `--param ${n}=${passed[n]}` : `param ${n} (default '${String(cause.params[n])}')`))
    .join(', ');
  const onlyValue = names.length === 1 && path.normalize(String(cause.params[names[0] as string])).replace(/\/$/, '') === cause.path;
  const problem = cause.problem === 'does not exist' ? 'no such folder' : cause.problem;
  const where = path.isAbsolute(cause.path) ? '' : ` (${path.resolve(root, cause.path)})`;
  const what = onlyValue ? `${problem}${where}` : `${cause.path}${where} ${cause.problem}`;
  const defaults = names.filter((n) => passed[n] === undefined);
  const fix = defaults.length ? `; pass the folder with ${defaults.map((n) => `--param ${n}=PATH`).join(' or ')}` : '';
  return `${shown}: ${what}${fix}`;
}

/**
 * For a built-in pipeline: an error caused by a path param is said of the param, without the
 * file's place or its edit hints; the same cause met by several stages is said once.
 */
export function speakOfParams(diagnostics: readonly Diagnostic[], passed: Readonly<Record<string, string>>, root: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const said = new Set<string>();
  for (const d of diagnostics) {
    if (!d.paramPath) {
      out.push(d);
      continue;
    }
    const message = paramMessage(d.paramPath, passed, root);
    if (said.has(message)) continue;
    said.add(message);
    out.push({ severity: d.severity, code: d.code, message });
  }
  return out;
}
