// What a shareable bundle is cleaned of before anything is written, and how many of each: known
// secret values (key variables of the environment and of refinery.config.yaml, secret-looking
// keys of the MassGen config), the user's own patterns (--redact), absolute paths of the run
// (made relative to it), then credential shapes, e-mail addresses and home folders
// (src/security/redact.ts).
import { ALL_KINDS, emptyCounts, MARKER, marker, redact, redactDeep, redactField, type RedactionKind } from '../../security/redact.ts';

export type BundleRedactionKind = RedactionKind | 'run_path' | 'pattern';

export interface BundleRedactorOptions {
  /** Exact secret values. */
  secrets: readonly string[];
  /** Extra patterns (JavaScript regular expressions, matched globally). */
  patterns: readonly RegExp[];
  /** The run folder's name (log_*): an absolute path through it becomes relative to the logs folder. */
  session: string;
  /** Absolute folders that stand for the run (MassGen's working directory, the logs folder here): replaced by `.`. */
  runFolders: readonly string[];
  /** Home folders besides the usual /home/NAME forms. */
  homeDirs: readonly string[];
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PATH_END = `(?=$|[\\\\/\\s"'\`<>|,;:)\\]}])`;

export class BundleRedactor {
  readonly counts: Record<BundleRedactionKind, number>;
  private readonly throughSession: RegExp;
  private readonly folders: RegExp[];

  constructor(private readonly options: BundleRedactorOptions) {
    this.counts = { ...emptyCounts(), run_path: 0, pattern: 0 };
    // /any/absolute/path/.../log_X[/...] -> log_X[/...]
    this.throughSession = new RegExp(
      `(?<![\\w.~\\\\/-])(?:[A-Za-z]:)?(?:[\\\\/][^\\\\/\\s"'\`<>|]+)*?[\\\\/](?=${escapeRegExp(options.session)}${PATH_END})`,
      'g',
    );
    this.folders = [...new Set(options.runFolders)]
      .map((f) => f.replace(/[\\/]+$/, ''))
      .filter((f) => f.length > 1)
      .sort((a, b) => b.length - a.length)
      .map((f) => new RegExp(`${escapeRegExp(f)}${PATH_END}`, 'g'));
  }

  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  count(kind: BundleRedactionKind, n: number): void {
    this.counts[kind] += n;
  }

  text(input: string): string {
    // Credentials were redacted when the logs were read (ingestion); they count as removed here.
    if (input.includes('[redacted:'))
      for (const m of input.matchAll(MARKER)) if (m[1] && m[1] in this.counts) this.count(m[1] as BundleRedactionKind, 1);
    let out = input;
    const secrets = redact(out, { secrets: this.options.secrets, kinds: ['secret_value'] });
    out = secrets.text;
    this.count('secret_value', secrets.counts.secret_value);
    for (const pattern of this.options.patterns) {
      out = out.replace(pattern, () => {
        this.count('pattern', 1);
        return marker('pattern' as RedactionKind);
      });
    }
    out = out.replace(this.throughSession, () => {
      this.count('run_path', 1);
      return '';
    });
    for (const folder of this.folders) {
      out = out.replace(folder, () => {
        this.count('run_path', 1);
        return '.';
      });
    }
    const shapes = redact(out, { kinds: ALL_KINDS.filter((k) => k !== 'secret_value'), homeDirs: this.options.homeDirs });
    for (const [kind, n] of Object.entries(shapes.counts)) this.count(kind as RedactionKind, n);
    return shapes.text;
  }

  deep<T>(value: T): T {
    return redactDeep(
      value,
      (s) => this.text(s),
      (key, s) => {
        const field = redactField(key, s, { kinds: ['secret_assignment'] });
        if (field.total === 0) return this.text(s);
        this.count('secret_assignment', 1);
        return field.text;
      },
    );
  }
}

/** `--redact PATTERN`: a JavaScript regular expression; an empty or zero-width one is refused. */
export function parseRedactPattern(source: string): RegExp | string {
  let re: RegExp;
  try {
    re = new RegExp(source, 'gu');
  } catch (error) {
    return `--redact '${source}' is not a valid regular expression: ${(error as Error).message}`;
  }
  if (re.test('')) return `--redact '${source}' matches the empty string; give a pattern that matches the text to remove`;
  re.lastIndex = 0;
  return re;
}

const SECRET_KEY = /key|token|secret|password|passwd|authorization|credential/i;

function isSecretEntry(key: string, value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !value.startsWith('[redacted:') && SECRET_KEY.test(key) && !/_env$/i.test(key);
}

/** Values of secret-looking keys anywhere in a config tree (a MassGen config dump may hold an api_key). */
export function configSecrets(tree: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 12 || tree === null || typeof tree !== 'object') return out;
  for (const [key, value] of Object.entries(tree as Record<string, unknown>)) {
    if (isSecretEntry(key, value)) out.push(value);
    else configSecrets(value, out, depth + 1);
  }
  return out;
}

/** A copy of a config tree with the values of secret-looking keys replaced (however short), and how many. */
export function maskConfigSecrets(tree: unknown, depth = 0): { value: unknown; masked: number } {
  if (depth > 12 || tree === null || typeof tree !== 'object') return { value: tree, masked: 0 };
  if (Array.isArray(tree)) {
    let masked = 0;
    const value = tree.map((item) => {
      const r = maskConfigSecrets(item, depth + 1);
      masked += r.masked;
      return r.value;
    });
    return { value, masked };
  }
  let masked = 0;
  const value: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(tree as Record<string, unknown>)) {
    if (isSecretEntry(key, item)) {
      value[key] = marker('secret_value');
      masked += 1;
    } else {
      const r = maskConfigSecrets(item, depth + 1);
      value[key] = r.value;
      masked += r.masked;
    }
  }
  return { value, masked };
}
