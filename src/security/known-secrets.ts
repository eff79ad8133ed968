// The secrets this process knows about, and the one redaction step every backend error, log line,
// event and artifact text goes through before it is written anywhere (`redactSecrets`).
// Values come from the environment: every variable whose name looks secret (seeded on first use),
// plus each configured `api_key_env` variable whatever its name (registered by the backends).
import { KEY_KINDS, MIN_SECRET_LENGTH, mayHoldCredential, redact, redactDeep } from './redact.ts';

/** Environment variable names whose values are treated as secrets. */
export const SECRET_ENV_NAME = /(?:API_?KEY|ACCESS_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|AUTH)$/i;

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
  if (value === undefined || value.length < MIN_SECRET_LENGTH || values.has(value)) return;
  values.add(value);
  shared.version += 1;
}

/** Remembers the values of `names` in `env`; without names, of every variable whose name looks secret. */
export function rememberSecretsOf(env: NodeJS.ProcessEnv, names?: Iterable<string>): void {
  if (names) for (const name of names) rememberSecret(env[name]);
  else for (const [name, value] of Object.entries(env)) if (SECRET_ENV_NAME.test(name)) rememberSecret(value);
}

export function knownSecrets(): readonly string[] {
  if (!seeded) {
    seeded = true;
    rememberSecretsOf(process.env);
  }
  if (sorted === undefined || sortedVersion !== shared.version) {
    sorted = [...values];
    sortedVersion = shared.version;
  }
  return sorted;
}

/** The redaction step: known secret values and credential shapes (sk-…, Bearer …, AIza…, ghp_…, xoxb-…). */
export function redactSecrets(text: string): string {
  const secrets = knownSecrets();
  if (!mayHoldCredential(text, secrets)) return text;
  return redact(text, { secrets, kinds: KEY_KINDS }).text;
}

/** `redactSecrets` on every string inside a JSON-like value; the same object back when nothing changed. */
export function redactSecretsDeep<T>(value: T): T {
  return redactDeep(value, redactSecrets);
}
