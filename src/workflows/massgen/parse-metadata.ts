// execution_metadata.yaml (spec §2.13): the best version detector; config may be absent in attempt_2+.
import { arr, obj, str } from './coerce.ts';
import type { ExecutionMetadata, WarningSink } from './model.ts';
import { parseYamlText } from './yaml-file.ts';

const SECRET_KEY = /key|token|secret|password|authorization/i;

export function parseMetadata(text: string, rel: string, warn: WarningSink): ExecutionMetadata | null {
  const parsed = parseYamlText(text);
  if (!parsed.ok) {
    warn(rel, 'invalid-yaml', `invalid YAML (cut off mid-write?): ${parsed.message.slice(0, 200)}; ignored`);
    return null;
  }
  const root = obj(parsed.value);
  if (!root) {
    warn(rel, 'wrong-type', 'expected a mapping at the top level; ignored');
    return null;
  }
  if (!text.endsWith('\n')) warn(rel, 'truncated', 'the file does not end with a newline: it was probably cut off mid-write');
  if (root.massgen_version === undefined)
    warn(rel, 'missing-field', 'no massgen_version key (the writer always puts it near the end: cut off?)');
  const config = obj(root.config) ?? {};
  const git = obj(root.git) ?? {};
  const cli = obj(root.cli_args) ?? {};
  const agents = arr(config.agents)
    .map(obj)
    .filter((a): a is Record<string, unknown> => a !== null)
    .map((a) => {
      const backend = obj(a.backend) ?? {};
      return { id: str(a.id) ?? '?', backend: str(backend.type), model: str(backend.model) };
    });
  return {
    query: str(root.query),
    timestamp: str(root.timestamp),
    configPath: str(root.config_path),
    massgenVersion: scalar(root.massgen_version),
    pythonVersion: str(root.python_version),
    agents,
    orchestrator: flatScalars({ orchestrator: config.orchestrator, timeout_settings: config.timeout_settings }),
    gitBranch: str(git.branch),
    gitCommit: str(git.commit),
    cliSessionId: str(cli.session_id),
    cliMode: str(cli.mode),
    configSessionId: str(config.session_id),
  };
}

function scalar(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
}

/** Scalar leaves of a small config subtree as dotted keys, sorted; secrets are never copied. */
function flatScalars(tree: Record<string, unknown>, prefix = '', depth = 0, out: Record<string, string | number | boolean | null> = {}) {
  for (const key of Object.keys(tree).sort()) {
    const value = tree[key];
    const name = prefix ? `${prefix}.${key}` : key;
    if (SECRET_KEY.test(key)) continue;
    if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[name] = value;
    else if (obj(value) && depth < 3) flatScalars(obj(value) ?? {}, name, depth + 1, out);
    if (Object.keys(out).length >= 50) break;
  }
  return out;
}
