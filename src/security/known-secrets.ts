// The secrets this process knows about, and the one redaction step every backend error, log line,
// event and artifact text goes through before it is written anywhere (`redactSecrets`).
// Values come from the environment: every variable whose name looks secret (seeded on first use),
// plus each variable refinery's config names whatever its name (`api_key_env` registered by the
// backends, `signing_key_env` and `headers_from_env` by the remote cache). A multi-line value
// (a PEM key) is remembered line by line too: a log holds it one line at a time.
import { KEY_KINDS, marker, mayHoldCredential, redact, redactDeep, secretPieces } from './redact.ts';
import { isSecretFieldValue } from './secret-shapes.ts';

/**
 * Environment variable names whose values are treated as secrets: `*_KEY` (`*_PRIVATE_KEY`,
 * `*_API_KEY`, `*_SIGNING_KEY`), `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, and a few more endings.
 */
export const SECRET_ENV_NAME = /(?:^|_)(?:KEY|APIKEY|TOKEN|SECRET|PASSWD|PASSPHRASE|AUTH|CREDENTIALS?)$|PASSWORD/i;

// Shared through globalThis: the CLI may run from dist/ while the built-in tasks import the
// TypeScript sources, two instances of this module in one process that must know the same secrets.
const SHARED = Symbol.for('refinery.known-secrets');
const shared = ((globalThis as Record<symbol, unknown>)[SHARED] ??= { values: new Set<string>(), version: 0 }) as {
  values: Set<string>;
  version: number;
};
const values = shared.values;
let sorted: string[] | undefined;
let sortedVersion = -1;
let seeded = false;

export function rememberSecret(value: string | undefined): void {
  if (value === undefined) return;
  for (const piece of secretPieces(value)) {
    if (values.has(piece)) continue;
    values.add(piece);
    shared.version += 1;
  }
}

/** Remembers the values of `names` in `env`; without names, of every variable whose name looks secret. */
export function rememberSecretsOf(env: NodeJS.ProcessEnv, names?: Iterable<string>): void {
  if (names) for (const name of names) rememberSecret(env[name]);
  else for (const [name, value] of Object.entries(env)) if (SECRET_ENV_NAME.test(name)) rememberSecret(value);
}

/** Every secret value and line of one this process knows, longest first. */
export function knownSecrets(): readonly string[] {
  if (!seeded) {
    seeded = true;
    rememberSecretsOf(process.env);
  }
  if (sorted === undefined || sortedVersion !== shared.version) {
    // Frozen: redact() works out a list's pieces once and keeps them while the list is the same.
    sorted = Object.freeze([...values].sort((a, b) => b.length - a.length)) as string[];
    sortedVersion = shared.version;
  }
  return sorted;
}

/** The redaction step: known secret values and credential shapes (secret-shapes.ts), raw or encoded. */
export function redactSecrets(text: string): string {
  const secrets = knownSecrets();
  if (!mayHoldCredential(text, secrets)) return text;
  return redact(text, { secrets, kinds: KEY_KINDS }).text;
}

/** `redactSecrets` on every string inside a JSON-like value; the same object back when nothing changed. */
export function redactSecretsDeep<T>(value: T): T {
  return redactDeep(value, redactSecrets, redactSecretField);
}

/** A field's value, knowing the field's name: `{"password": "…"}` is a secret by its name alone. */
export function redactSecretField(key: string, text: string): string {
  return isSecretFieldValue(key, text) ? marker('secret_assignment') : redactSecrets(text);
}
