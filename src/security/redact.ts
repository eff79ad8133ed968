// Pure redaction of secrets and personal details in text: the one place that knows what a secret
// looks like. Callers choose the kinds; the result says how many of each were replaced, so an
// exporter can report what it removed without ever holding the removed text.

export type RedactionKind =
  /** An exact value the caller knows is secret (the value of a configured api_key_env variable). */
  | 'secret_value'
  /** OpenAI/Anthropic style keys: `sk-…`, `sk-proj-…`, `sk-ant-…`. */
  | 'sk_key'
  /** The credential after `Bearer ` (an echoed Authorization header). */
  | 'bearer_token'
  /** Google API keys: `AIza…`. */
  | 'google_api_key'
  /** GitHub tokens: `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`. */
  | 'github_token'
  /** Slack tokens: `xoxb-…`, `xoxp-…`, … */
  | 'slack_token'
  | 'email'
  /** A home folder (`/home/NAME`, `/Users/NAME`, `C:\Users\NAME`, or one given), replaced by `~`. */
  | 'home_path';

/** Credentials: what every log line, event and artifact is cleaned of. */
export const KEY_KINDS: readonly RedactionKind[] = [
  'secret_value',
  'sk_key',
  'bearer_token',
  'google_api_key',
  'github_token',
  'slack_token',
];
/** Credentials and personal details: for text that leaves the machine (bundles, shared reports). */
export const ALL_KINDS: readonly RedactionKind[] = [...KEY_KINDS, 'email', 'home_path'];

/** Known secret values shorter than this are not searched for: they would match ordinary words. */
export const MIN_SECRET_LENGTH = 8;

export interface RedactOptions {
  /** Exact secret values (e.g. API keys from the environment). */
  secrets?: Iterable<string>;
  /** What to redact; default KEY_KINDS. */
  kinds?: readonly RedactionKind[];
  /** Home folders to replace by `~` (with `home_path`), besides the usual /home/NAME forms. */
  homeDirs?: readonly string[];
}

export interface Redaction {
  text: string;
  /** Replacements per kind (every kind present, 0 when none). */
  counts: Record<RedactionKind, number>;
  total: number;
}

export function marker(kind: RedactionKind): string {
  return `[redacted:${kind}]`;
}

interface ShapeRule {
  kind: RedactionKind;
  pattern: RegExp;
  replace: (match: string, ...groups: string[]) => string;
}

// Token bodies stop at characters that delimit them in JSON, headers and prose. A new credential
// rule needs its prefix in CREDENTIAL_HINT below.
const SHAPE_RULES: readonly ShapeRule[] = [
  { kind: 'sk_key', pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g, replace: () => marker('sk_key') },
  // The token must hold a digit or a capital, so prose ("Bearer authentication") is left alone.
  {
    kind: 'bearer_token',
    pattern: /\b([Bb]earer|BEARER)(\s+)(?=[a-z._~+/-]*[A-Z0-9])[A-Za-z0-9._~+/-]{8,}=*/g,
    replace: (_m, word, space) => `${word}${space}${marker('bearer_token')}`,
  },
  { kind: 'google_api_key', pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{30,}/g, replace: () => marker('google_api_key') },
  {
    kind: 'github_token',
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
    replace: () => marker('github_token'),
  },
  { kind: 'slack_token', pattern: /(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}/g, replace: () => marker('slack_token') },
  {
    kind: 'email',
    pattern: /(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9-])/g,
    replace: () => marker('email'),
  },
  { kind: 'home_path', pattern: /(?<![\w.-])(?:\/home\/|\/Users\/|[A-Za-z]:\\Users\\)[^/\\\s"'`:;,)\]}<>]+/g, replace: () => '~' },
];

function emptyCounts(): Record<RedactionKind, number> {
  return { secret_value: 0, sk_key: 0, bearer_token: 0, google_api_key: 0, github_token: 0, slack_token: 0, email: 0, home_path: 0 };
}

function replaceAll(text: string, needle: string, by: string): { text: string; count: number } {
  const parts = text.split(needle);
  return { text: parts.length === 1 ? text : parts.join(by), count: parts.length - 1 };
}

/** Longest first, so a secret that contains another is replaced whole. */
function usableSecrets(secrets: Iterable<string> | undefined): string[] {
  const list = [...new Set(secrets ?? [])].filter((s) => s.length >= MIN_SECRET_LENGTH);
  return list.sort((a, b) => b.length - a.length);
}

// What every credential shape starts with: one cheap test that clears almost every clean string.
const CREDENTIAL_HINT = /sk-|earer|EARER|AIza|gh[pousr]_|github_pat_|xox[abposr]-/;
const SHORTEST_MATCH = 8;

/**
 * False when `text` certainly holds none of the credentials (KEY_KINDS) nor `secrets`: lets hot
 * paths (every run event) skip `redact` for clean text.
 */
export function mayHoldCredential(text: string, secrets: readonly string[]): boolean {
  if (text.length < SHORTEST_MATCH) return false;
  if (CREDENTIAL_HINT.test(text)) return true;
  for (const secret of secrets) if (text.includes(secret)) return true;
  return false;
}

/** A given home folder, as a whole folder name only: /home/al is not the start of /home/alice. */
function homePattern(home: string): RegExp {
  const literal = home.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`${literal}(?=$|[/\\\\\\s"'\`:;,)\\]}<>])`, 'g');
}

/** Replaces the chosen kinds of secrets and personal details in `text`; counts what it replaced. */
export function redact(text: string, options: RedactOptions = {}): Redaction {
  const kinds = new Set(options.kinds ?? KEY_KINDS);
  const counts = emptyCounts();
  let out = text;
  if (kinds.has('secret_value')) {
    for (const secret of usableSecrets(options.secrets)) {
      const step = replaceAll(out, secret, marker('secret_value'));
      out = step.text;
      counts.secret_value += step.count;
    }
  }
  if (kinds.has('home_path')) {
    const homes = [...new Set(options.homeDirs ?? [])]
      .map((h) => h.replace(/[/\\]+$/, ''))
      .filter((h) => h.length > 1)
      .sort((a, b) => b.length - a.length);
    for (const home of homes) {
      out = out.replace(homePattern(home), () => {
        counts.home_path += 1;
        return '~';
      });
    }
  }
  for (const rule of SHAPE_RULES) {
    if (!kinds.has(rule.kind)) continue;
    out = out.replace(rule.pattern, (...args: unknown[]) => {
      counts[rule.kind] += 1;
      return rule.replace(...(args as [string, ...string[]]));
    });
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return { text: total === 0 ? text : out, counts, total };
}

/**
 * Redacts every string inside a JSON-like value (objects, arrays); returns the same object when
 * nothing changed, so callers on hot paths pay no copy for clean data.
 */
export function redactDeep<T>(value: T, redactString: (text: string) => string): T {
  if (typeof value === 'string') return redactString(value) as T;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = redactDeep(item, redactString);
      if (next !== item) (copy ??= [...value])[i] = next;
    }
    return (copy ?? value) as T;
  }
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const record = value as Record<string, unknown>;
    let copy: Record<string, unknown> | undefined;
    for (const key in record) {
      const item = record[key];
      const next = redactDeep(item, redactString);
      if (next !== item) (copy ??= { ...record })[key] = next;
    }
    return (copy ?? value) as T;
  }
  return value;
}
