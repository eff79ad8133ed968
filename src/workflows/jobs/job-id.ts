import { randomBytes } from 'node:crypto';

/** Safe as a file name and as one MQTT topic level: no `/`, `+`, `#`, dots, spaces or NUL. */
const JOB_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export class InvalidJobIdError extends Error {}

export function isValidJobId(id: string): boolean {
  return JOB_ID_PATTERN.test(id);
}

/** Throws a message that names the id and the rule. */
export function assertJobId(id: string, where = 'job id'): string {
  if (!isValidJobId(id)) {
    throw new InvalidJobIdError(
      `${where} '${printable(id)}' is not valid: use 1-64 letters, digits, '-' or '_' (starting with a letter or digit)`,
    );
  }
  return id;
}

/** 8 lowercase hex characters, like the seed's ids. */
export function newJobId(): string {
  return randomBytes(4).toString('hex');
}

function printable(value: string): string {
  const clipped = value.length > 80 ? `${value.slice(0, 80)}...` : value;
  return clipped.replace(/[^\x20-\x7e]/g, '?');
}
