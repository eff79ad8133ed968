// The table of credential shapes: what a secret looks like when nobody told us its value. Each
// rule is one precompiled regular expression; `SHAPE_HINT` and `ASSIGNMENT_HINT` are the cheap
// tests that clear clean text before any rule runs (a new rule needs its prefix in SHAPE_HINT).

export type ShapeKind =
  /** OpenAI and Anthropic keys: `sk-…`, `sk-proj-…`, `sk-ant-…`. */
  | 'sk_key'
  /** The credential after `Bearer ` (an echoed Authorization header). */
  | 'bearer_token'
  /** Google: API keys `AIza…`, OAuth client secrets `GOCSPX-…`, access tokens `ya29.…`. */
  | 'google_api_key'
  /** GitHub tokens: `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…`. */
  | 'github_token'
  /** Slack tokens (`xoxb-…`, `xapp-…`) and incoming-webhook URLs. */
  | 'slack_token'
  /** AWS access key ids (`AKIA…`, `ASIA…`) and the 40-character secret written next to one. */
  | 'aws_access_key'
  /** JSON Web Tokens: `eyJ….eyJ….…`. */
  | 'jwt'
  /** PEM private keys (`-----BEGIN … PRIVATE KEY-----` and the body after it). */
  | 'private_key'
  /** `NAME=value` or `"name": "value"` where the name says secret and the value looks random. */
  | 'secret_assignment';

export interface ShapeRule {
  kind: ShapeKind;
  pattern: RegExp;
  /** The replacement, given the marker and the match's groups; default: the marker alone. */
  replace?: (marker: string, match: string, groups: (string | undefined)[]) => string;
}

/** What every credential shape (except assignments) starts with: one test clears most clean text. */
export const SHAPE_HINT =
  /sk-|earer|EARER|AIza|GOCSPX-|ya29\.|gh[pousr]_|github_pat_|xox[abposre]-|xapp-|hooks\.slack\.com|AKIA|ASIA|ABIA|ACCA|eyJ|PRIVATE KEY/;

/** Words a secret's name holds; an assignment rule runs only on text that has one and a `:` or `=`. */
export const ASSIGNMENT_HINT = /secret|token|passw|passphrase|key|credential|auth/i;

// Token bodies stop at characters that delimit them in JSON, headers, URLs and prose.
const PEM_LABEL = '[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?';

// A name that says secret, ending in one of these words (`tokenizer` or `password_hash` do not).
const SECRET_NAME =
  '(?:secret|token|passw(?:or)?d|passphrase|api[_-]?key|apikey|access[_-]?key|private[_-]?key|signing[_-]?key|secret[_-]?key|auth[_-]?key|credentials?|authorization|[_-]key)';

/**
 * Rules run in this order: whole PEM blocks first (their body would look like anything), then
 * prefixed tokens, assignments last (a value already replaced by a prefixed rule is left alone).
 */
export const SHAPE_RULES: readonly ShapeRule[] = [
  { kind: 'private_key', pattern: new RegExp(`-----BEGIN (${PEM_LABEL})-----[\\s\\S]{0,65536}?-----END \\1-----`, 'g') },
  // A header without its end (one line of a log, a cut-off file): it and the body lines after it.
  {
    kind: 'private_key',
    pattern: new RegExp(`-----BEGIN ${PEM_LABEL}-----(?:(?:\\s|\\\\[nr])+(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]{2,30}: [^\\n\\\\]*))*`, 'g'),
  },
  {
    kind: 'bearer_token',
    // The token must hold a digit or a capital, so prose ("Bearer authentication") is left alone.
    pattern: /\b([Bb]earer|BEARER)(\s+)(?=[a-z._~+/-]*[A-Z0-9])[A-Za-z0-9._~+/-]{8,}=*/g,
    replace: (marker, _m, [word, space]) => `${word}${space}${marker}`,
  },
  { kind: 'jwt', pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g },
  { kind: 'sk_key', pattern: /(?<![A-Za-z0-9_-])sk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g },
  {
    kind: 'aws_access_key',
    pattern:
      /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])(?:(\s*[,:;=|]\s*|\s+)(["']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=]))?/g,
    replace: (marker, _m, [separator, quote]) => (separator === undefined ? marker : `${marker}${separator}${quote ?? ''}${marker}`),
  },
  {
    kind: 'github_token',
    pattern: /(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g,
  },
  { kind: 'google_api_key', pattern: /(?<![A-Za-z0-9_-])(?:AIza[0-9A-Za-z_-]{30,}|GOCSPX-[A-Za-z0-9_-]{20,}|ya29\.[0-9A-Za-z_-]{20,})/g },
  {
    kind: 'slack_token',
    pattern:
      /(?<![A-Za-z0-9_-])(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})|https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]{20,}/g,
  },
  {
    kind: 'secret_assignment',
    // The match starts at the name's last word (`PASSWORD` of `DB_PASSWORD`): a pattern that began
    // with the whole name would be tried at every character of every line. A quote may be escaped
    // (\"): the assignment is inside a JSON string.
    pattern: new RegExp(`(${SECRET_NAME}(?:\\\\?["'])?\\s*(?::=|=>|:|=)\\s*(?:\\\\?["'])?)([^\\s"'\`,;&<>(){}[\\]\\\\]{8,})`, 'gi'),
    replace: (marker, match, [name, value]) => (looksSecret(name ?? '', value ?? '') ? `${name}${marker}` : match),
  },
];

const SECRET_FIELD = new RegExp(`^[A-Za-z0-9_.-]{0,40}?${SECRET_NAME}$`, 'i');

/** A JSON field (or YAML key) whose name says secret and whose value looks like one. */
export function isSecretFieldValue(key: string, value: string): boolean {
  if (value.length < 8 || !secretFieldName(key) || /\s/.test(value)) return false;
  return looksSecret(`${key}=`, value);
}

// A run's events have a few dozen field names: each is tested once.
const fieldNames = new Map<string, boolean>();

function secretFieldName(key: string): boolean {
  let verdict = fieldNames.get(key);
  if (verdict === undefined) {
    verdict = key.length <= 80 && SECRET_FIELD.test(key);
    if (fieldNames.size < 10_000) fieldNames.set(key, verdict);
  }
  return verdict;
}

const PLACEHOLDER = /^(?:\$|%|<|\*+$|x+$|\.\.\.|true$|false$|null$|none$|undefined$|required$|optional$|redacted)/i;

/**
 * Whether an assigned value is a credential rather than a setting: not a variable's name
 * (`api_key_env: OPENAI_API_KEY`), a placeholder or a path, and mixing two of lower case, upper
 * case and digits. Under a bare `_key` name a hex string is a hash (a cache key), not a secret.
 */
export function looksSecret(name: string, value: string): boolean {
  if (/^[A-Z][A-Z0-9_]*$/.test(value) || PLACEHOLDER.test(value)) return false;
  const classes = Number(/[a-z]/.test(value)) + Number(/[A-Z]/.test(value)) + Number(/[0-9]/.test(value));
  if (classes < 2) return false;
  const bareKey = /[_-]key["']?\s*[:=]/i.test(name) && !/(?:api|access|private|signing|secret|auth)[_-]?key/i.test(name);
  return !(bareKey && /^[0-9a-f]+$/i.test(value));
}
