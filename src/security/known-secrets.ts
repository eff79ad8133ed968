// The secrets this process knows about, and the one redaction step every backend error, log line,
// event and artifact text goes through before it is written anywhere (`redactSecrets`).
// Values come from the environment: every variable whose name looks secret (seeded on first use),
// plus each configured `api_key_env` variable whatever its name (registered by the backends).
import { KEY_KINDS, MIN_SECRET_LENGTH, mayHoldCredential, redact, redactDeep } from './redact.ts';

/** Environment variable names whose values are treated as secrets. */
export const SECRET_ENV_NAME = /(?:API_?KEY|ACCESS_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|AUTH)$/i;

const values = new Set<string>();
let sorted: string[] | undefined;
let seeded = false;

export function rememberSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH || values.has(value)) return;
  values.add(value);
  sorted = undefined;
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
  sorted ??= [...values];
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
